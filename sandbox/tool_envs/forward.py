"""A client's own request to the mock tool server, sent in one episode's scope, and what it was.

An external agent may call the suite's REST routes itself (``POST /tools/{tool}/{api}``, the
typed ``/api/...`` routes, StableToolBench's ``/virtual``) instead of the sandbox's ``/call``.
``Forwarder(env).forward(method, path, ...)`` sends such a request through an episode's
``HttpToolEnv``
with the episode's ``X-Sandbox-*`` headers (so it counts occurrences and meets faults in that
episode's scope, whatever headers the client sent) and returns the server's answer untouched,
together with what the call was when it was one: the ``(tool, api)`` it reached, its function
name (the offered name, else ``<api>_for_<tool>``), its arguments, and the observation an agent
of the sandbox would have recorded for it. Other requests (``/health``, ``/tools``, ``/stats``,
``/openapi.json``...) are answered the same way and are no call.

In a world suite (``WorldToolEnv``) a call goes to the episode's own session: it is opened first (at
the task's initial state, with the run's seed) when no call opened it yet, and the env follows the
state the call leaves (the ``/virtual`` answer's state comes in its ``X-Sandbox-State`` header).
Names are resolved among the APIs the episode's task offers (a call to another API of the suite
still reaches the server and is recorded under the name it was called by); the typed routes' paths
are read once per episode from the server's catalog (``GET /tools``). An answer over the cap
(``reply_cap``) is not read: the client gets 502 with the reason, the call is recorded with its
``fault:reply_too_large`` observation. May import ``sandbox.tool_envs.http``,
``sandbox.tool_envs.reply_cap``, ``agents`` and ``mock_tools``.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import httpx

from agents.errors import ToolEnvError
from agents.toolenv import Observation
from mock_tools import PROVENANCE_HEADER, NameResolver
from mock_tools.headers import STATE_HEADER
from mock_tools.names import function_name
from sandbox.tool_envs.http import (
    HttpToolEnv,
    WorldToolEnv,
    observation_text,
    to_observation,
    too_large_observation,
    within_call_time,
)
from sandbox.tool_envs.reply_cap import ToolReplyTooLarge

__all__ = ["ForwardedCall", "Forwarder", "route_kind"]

_PASSED_HEADERS = (
    "content-type",
    "x-sandbox-provenance",
    "x-sandbox-occurrence",
    "x-sandbox-state",
)


@dataclass
class ForwardedCall:
    """The server's answer to a forwarded request and, when it was a tool call, the call."""

    status: int
    body: bytes
    headers: list[tuple[str, str]] = field(default_factory=list)
    route: str | None = None
    """``native``, ``typed`` or ``virtual`` for a tool call; None for any other request."""
    name: str = ""
    function: str | None = None
    """The offered function the call reached (None: an API the task does not offer)."""
    tool: str | None = None
    api: str | None = None
    arguments: str = "{}"
    args: dict[str, Any] | None = None
    observation: Observation | None = None


def route_kind(method: str, path: str) -> str | None:
    """Whether ``method path`` is a tool call of the mock tool server, and of which route."""
    if method.upper() != "POST":
        return None
    if path == "/virtual":
        return "virtual"
    parts = path.strip("/").split("/")
    if len(parts) == 3 and parts[0] == "tools":
        return "native"
    if len(parts) >= 3 and parts[0] == "api":
        return "typed"
    return None


class Forwarder:
    """Forwards a client's requests through one episode's ``env`` (see the module); keeps the
    name resolver and the typed routes' paths for the episode."""

    def __init__(self, env: HttpToolEnv) -> None:
        self.env = env
        self._resolver: NameResolver | None = None
        self._typed: dict[str, tuple[str, str]] | None = None

    async def forward(
        self,
        method: str,
        path: str,
        *,
        query: str = "",
        content: bytes = b"",
        content_type: str | None = None,
    ) -> ForwardedCall:
        """Send the request in the episode's scope; the answer and, for a call, the call."""
        env = self.env
        headers = env.scope_headers
        if content_type:
            headers["content-type"] = content_type
        url = path + (f"?{query}" if query else "")
        kind = route_kind(method, path)
        started = time.perf_counter()
        try:
            if kind is not None and isinstance(env, WorldToolEnv):
                await env.open_session()
            ask = env.client.request(method, url, content=content, headers=headers)
            resp = await within_call_time(env.call_timeout, ask)
        except ToolReplyTooLarge as e:
            return _too_large(env, kind, path, content, e, started)
        except (httpx.HTTPError, ToolEnvError, asyncio.TimeoutError) as e:
            return _unreachable(env, kind, path, content, e, started)
        latency = (time.perf_counter() - started) * 1000
        passed = [(k, v) for k, v in resp.headers.items() if k.lower() in _PASSED_HEADERS]
        out = ForwardedCall(status=resp.status_code, body=resp.content, headers=passed, route=kind)
        if kind is None:
            return out
        if kind == "virtual":
            out.observation = _virtual_observation(resp, latency, env.ascii_observations)
        else:
            out.observation = to_observation(resp, latency, env.ascii_observations)
        if isinstance(env, WorldToolEnv):
            env.observe(out.observation)
        await self._identify(out, path, content)
        return out

    async def _identify(self, out: ForwardedCall, path: str, content: bytes) -> None:
        """Fill in which call ``out`` was: its target, name and arguments."""
        body = _json(content)
        if out.route == "virtual":
            payload = body if isinstance(body, dict) else {}
            tool, api = str(payload.get("tool_name") or ""), str(payload.get("api_name") or "")
            category = str(payload.get("category") or "")
            pair = self.resolver().resolve_call(tool, api, category)
            given = payload.get("tool_input")
            args = _json(given) if isinstance(given, str) else given
        elif out.route == "native":
            _, tool, api = (unquote(p) for p in path.strip("/").split("/"))
            pair = self.resolver().resolve(tool, api)
            args = body
        else:
            pair = (await self.typed_paths()).get(path.rstrip("/"))
            tool, api = pair if pair is not None else ("", path)
            args = body
        out.tool, out.api = pair if pair is not None else (tool or None, api)
        offered = {target: name for name, target in self.env.targets.items()}
        out.function = offered.get(pair) if pair is not None else None
        out.name = out.function or function_name(out.tool or "", out.api or "")
        out.args = args if isinstance(args, dict) else None
        out.arguments = json.dumps(args, ensure_ascii=False) if args is not None else "{}"

    def resolver(self) -> NameResolver:
        """Names among the APIs the episode's task offers (cheap whatever the suite's size)."""
        if self._resolver is None:
            env = self.env
            offered = {pair: env.apis[pair] for pair in env.targets.values() if pair in env.apis}
            self._resolver = NameResolver.for_apis(offered)
        return self._resolver

    async def typed_paths(self) -> dict[str, tuple[str, str]]:
        """The typed routes' paths, from the server's catalog (``GET /tools``), read once."""
        if self._typed is None:
            self._typed = await _typed_paths(self.env)
        return self._typed


def _unreachable(
    env: HttpToolEnv, kind: str | None, path: str, content: bytes, e: Exception, started: float
) -> ForwardedCall:
    if isinstance(e, ToolEnvError):
        msg = f"cannot open the episode's session: {e}"
    else:
        msg = f"cannot reach the tool server: {type(e).__name__}: {e}"
    text = observation_text(msg, "", ascii_only=env.ascii_observations)
    out = ForwardedCall(status=502, body=text.encode(), route=kind)
    out.headers = [("content-type", "application/json")]
    if kind is not None:
        out.observation = Observation(
            ok=False,
            content=text,
            provenance="transport:connection",
            error=msg,
            infra=True,
            latency_ms=(time.perf_counter() - started) * 1000,
        )
        out.name, out.arguments = path, content.decode("utf-8", "replace") or "{}"
    return out


def _too_large(
    env: HttpToolEnv,
    kind: str | None,
    path: str,
    content: bytes,
    error: ToolReplyTooLarge,
    started: float,
) -> ForwardedCall:
    """The answer to a request whose answer was over the cap: 502 with the reason, and for a
    call the observation every transport gives (``fault:reply_too_large``)."""
    latency = (time.perf_counter() - started) * 1000
    obs = too_large_observation(error, latency, ascii_only=env.ascii_observations)
    out = ForwardedCall(status=502, body=obs.content.encode(), route=kind)
    out.headers = [("content-type", "application/json"), (PROVENANCE_HEADER, obs.provenance)]
    if kind is not None:
        out.observation = obs
        out.name, out.arguments = path, content.decode("utf-8", "replace") or "{}"
    return out


def _virtual_observation(resp: httpx.Response, latency_ms: float, ascii_only: bool) -> Observation:
    """A ``/virtual`` answer (``{"error", "response"}``) as an observation: it failed when the
    status is an error or the error text is not empty."""
    try:
        payload = resp.json()
    except (ValueError, UnicodeDecodeError):
        payload = None
    if not isinstance(payload, dict):
        return to_observation(resp, latency_ms, ascii_only)
    error = str(payload.get("error") or "")
    ok = resp.status_code < 400 and not error
    if not ok and not error:
        error = f"HTTP {resp.status_code}"
    response = payload.get("response")
    return Observation(
        ok=ok,
        content=observation_text(
            error, "" if response is None else response, ascii_only=ascii_only
        ),
        status=resp.status_code,
        provenance=resp.headers.get(PROVENANCE_HEADER, "") or ("hit" if ok else "error"),
        error=error,
        latency_ms=latency_ms,
        state=resp.headers.get(STATE_HEADER) or None,
    )


def _json(content: Any) -> Any:
    if isinstance(content, bytes):
        content = content.decode("utf-8", "replace")
    if not isinstance(content, str) or not content.strip():
        return None
    try:
        return json.loads(content)
    except ValueError:
        return None


async def _typed_paths(env: HttpToolEnv) -> dict[str, tuple[str, str]]:
    try:
        catalog = (await env.client.get("/tools", headers=env.scope_headers)).json()
    except (httpx.HTTPError, ValueError):
        return {}
    out: dict[str, tuple[str, str]] = {}
    for tool in catalog if isinstance(catalog, list) else []:
        for api in tool.get("apis", []):
            out[str(api.get("path", ""))] = (str(tool.get("name")), str(api.get("name")))
    return {p: pair for p, pair in out.items() if p}
