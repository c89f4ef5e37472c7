"""``ManagedModel``: the client of an alias with ``launch:``, which starts its server on first need.

On the first request (or probe) it asks the alias's ``base_url``: a server that answers there
and lists the alias's model in ``/v1/models`` (started by hand, or by another program) is used
as it is, and so is any server that answers at a ``base_url`` on another machine. When nothing
of the kind answers on this machine (or the alias has no ``base_url``), it starts the server the
alias names (``sandbox.models.launch``) on a free 127.0.0.1 port, waits until it is ready, and
sends every request there; ``aclose`` stops it. Each ``ManagedModel`` starts its own server, so
each run (each strategy of a ``compare``, each judge, each simulator) has its own; runs share a
server only when one answers at the alias's ``base_url``. A start that failed is not tried
again: every later request gets the same error. With ``launch.slots`` set, at most that many
requests are in flight at once (llama.cpp has one slot): the others wait here, where no timeout
runs; and after a timeout the slot is held until the server is done with the abandoned request
(``_drain``), so the next request does not time out behind it. May import
``sandbox.models.launch``, ``sandbox.models.server_process``, ``sandbox.models.provider`` and
``sandbox.errors`` only.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from agents.errors import ModelError, ModelUnreachable
from agents.model import Message, Turn
from sandbox.errors import ModelUnreachableError
from sandbox.models.launch import SERVER_KINDS, hand_command, missing_launcher, server_command
from sandbox.models.provider import ModelSpec
from sandbox.models.server_process import LaunchedServer

if TYPE_CHECKING:
    from agents.models.openai_compat import OpenAICompatModel

__all__ = ["DEFAULT_HAND_PORT", "ManagedModel", "is_loopback"]

DRAIN: list[Message] = [{"role": "user", "content": "."}]
"""The one-token request that waits out an abandoned generation on a single-slot server."""
DEFAULT_HAND_PORT = 8080
"""The port of the hand-started command shown for an alias without a ``base_url``."""


def is_loopback(base_url: str | None) -> bool:
    """A base URL on this machine (``localhost``, 127.0.0.0/8, ``::1``)."""
    host = urlsplit(base_url or "").hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ManagedModel:
    """A ``Model`` (with ``probe`` and ``aclose``) whose endpoint may be a server it launched."""

    def __init__(self, spec: ModelSpec, client_for: Callable[[str], OpenAICompatModel]) -> None:
        if spec.launch is None or not spec.model:
            raise ValueError("a managed model needs a spec with launch: and a model name")
        self.spec = spec
        self.launch = spec.launch
        self.name = spec.display_name
        self.params = dict(spec.params)
        self.client_for = client_for
        self.server: LaunchedServer | None = None
        self._client: OpenAICompatModel | None = None
        self._failed: BaseException | None = None
        self._lock: asyncio.Lock | None = None
        self._slots = asyncio.Semaphore(self.launch.slots) if self.launch.slots else None

    async def ready(self) -> OpenAICompatModel:
        """The client of a server that answers (launching one the first time it is needed)."""
        if self._client is not None:
            return self._client
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._failed is not None:
                raise self._failed
            if self._client is None:
                try:
                    self._client = await self._connect()
                except (ModelUnreachableError, ModelUnreachable) as e:
                    self._failed = e
                    raise
        return self._client

    async def _connect(self) -> OpenAICompatModel:
        base_url = self.spec.base_url
        if base_url:
            client = self.client_for(base_url)
            try:
                ids = await client.probe()
            except ModelUnreachable:
                await client.aclose()
                if not is_loopback(base_url):
                    raise
            else:
                if not is_loopback(base_url) or self.spec.model in ids:
                    return client
                await client.aclose()  # a server of another model answers there
        missing = missing_launcher(self.launch)
        if missing is not None:
            raise ModelUnreachableError(self._cannot_launch(missing))
        served = self.spec.model or ""
        kind = SERVER_KINDS[self.launch.server]
        self.server = LaunchedServer(
            lambda host, port: server_command(self.launch, served, host, port),
            name=kind.name,
            label=kind.label,
            start_timeout=self.launch.start_timeout,
            stop_grace=self.launch.stop_grace,
        )
        url = await self.server.start()
        return self.client_for(url)

    def _cannot_launch(self, missing: str) -> str:
        where = self.spec.base_url
        port = urlsplit(where).port if where else None
        command = hand_command(
            self.launch, self.spec.model or "", "127.0.0.1", port or DEFAULT_HAND_PORT
        )
        answer = f"nothing answers at {where} and " if where else ""
        elsewhere = "MODEL=openai:<model>@<base_url>"
        if self.spec.base_url_env:
            elsewhere = f"set {self.spec.base_url_env}=<base_url>, or {elsewhere}"
        return (
            f"model {self.name!r}: {answer}{missing}; or start its server by hand: {command}; "
            f"or point elsewhere: {elsewhere}"
        )

    # -- Model protocol ----------------------------------------------------------------------

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn:
        client = await self.ready()
        if self._slots is None:
            return await client.complete(messages, tools, params)
        async with self._slots:
            try:
                return await client.complete(messages, tools, params)
            except ModelError as e:
                if e.kind == "timeout":
                    await self._drain(client)
                raise

    async def _drain(self, client: OpenAICompatModel) -> None:
        """After a timeout the server still generates for the abandoned request (llama.cpp does
        not notice the closed connection): hold the slot until a one-token request, queued
        behind that generation, is answered, so the next request does not time out waiting."""
        with contextlib.suppress(ModelError):
            await client.complete(DRAIN, [], {"max_tokens": 1})

    async def probe(self) -> list[str]:
        """Ready (launched if need be), then the served model ids."""
        client = await self.ready()
        return await client.probe()

    async def aclose(self) -> None:
        """Close the client and stop the server it launched (if any)."""
        client, self._client = self._client, None
        try:
            if client is not None:
                await client.aclose()
        finally:
            server, self.server = self.server, None
            if server is not None:
                await server.stop()

    def __repr__(self) -> str:
        return f"ManagedModel(model={self.spec.model!r}, launch={self.launch.server!r})"
