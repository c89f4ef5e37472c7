"""The kind ``openai``: any OpenAI-compatible endpoint, one client shared by every episode.

Native tool calls (``tool_calls: toolbench``: with the history in ToolBench's shape), or the
Thought/Action text adapter (``tool_calls: text``); the opt-in model cache (``--model-cache``)
wraps the client; an alias that launches its own server sends each request a seed of its episode
(``sandbox.models.seeded``). ``probe`` asks the endpoint once before a run and, when nothing
answers, says how to start a server and how to point elsewhere; the run's first call goes alone
(``sandbox.models.first_call``), so a refused key or model costs one call. An alias with
``launch:`` starts its own server when none answers (``sandbox.models.managed``): at the probe,
or at the first request the cache cannot answer. May import ``sandbox.models.provider``,
``sandbox.models.cache``, ``sandbox.models.first_call``, ``sandbox.models.managed``,
``sandbox.models.seeded``, ``sandbox.models.entities`` and ``sandbox.errors`` only.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from agents.errors import ModelError
from agents.model import MAX_REPLY_BYTES, Model
from mock_tools.models import Task
from sandbox.errors import ConfigError, ModelUnreachableError
from sandbox.models.cache import CachedModel, EpisodeIdentity, RequestCache
from sandbox.models.entities import UnescapedModel
from sandbox.models.first_call import FirstCallGate
from sandbox.models.managed import ManagedModel
from sandbox.models.prices import MILLION
from sandbox.models.provider import ModelSettings, ModelSpec
from sandbox.models.seeded import SeededModel
from sandbox.models.simulators import ModelSimulator
from sandbox.store.redact import redact

if TYPE_CHECKING:
    from agents.models.openai_compat import OpenAICompatModel

__all__ = [
    "VLLM_HINT",
    "RemoteModels",
    "build_remote",
    "build_remote_simulator",
    "endpoint_client",
    "openai_client",
    "unreachable_message",
]

VLLM_HINT = (
    "vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice --tool-call-parser hermes"
)


class RemoteModels:
    """One client of the endpoint, shared by every episode.

    With the model cache (``settings.cache_path``) every episode gets its own ``CachedModel``
    over that client (the episode is part of the key), and the endpoint is probed on the first
    request the cache cannot answer instead of before the run.
    """

    def __init__(self, spec: ModelSpec, settings: ModelSettings) -> None:
        # Imported here, not at the top: start-up time that offline runs never need.
        from agents.models.text_react import TextReActModel

        self.spec = spec
        client: Model = openai_client(spec, max_reply_bytes=settings.max_reply_bytes)
        if spec.tool_calls == "text":
            client = TextReActModel(client)
        if spec.unescape_html:  # after the text adapter: JSON strings may hold the entities
            client = UnescapedModel(client)
        self.model = FirstCallGate(client)  # a refused set-up costs one call, not one per episode
        self.cache = RequestCache(settings.cache_path) if settings.cache_path else None
        # What the request is, not where it goes: the same model served from another host
        # answers from the same cache.
        self.identity = spec.model_dump_json(include={"kind", "model", "tool_calls", "params"})
        self._probed: asyncio.Task[None] | None = None

    def for_episode(self, task: Task, *, seed: int, trial: int) -> Model:
        episode = EpisodeIdentity(seed=seed, task=task.id, trial=trial)
        model: Model = self.model
        if self.spec.launch is not None:  # a server of the run's own: seeded requests
            model = SeededModel(model, episode=episode)
        if self.cache is None:
            return model
        return CachedModel(
            model,
            self.cache,
            identity=self.identity,
            episode=episode,
            first_miss=self._probe_once,
        )

    async def probe(self) -> None:
        """Before the run; deferred to the first cache miss when the cache is on."""
        if self.cache is None:
            await self._probe()

    async def _probe_once(self) -> None:
        if self._probed is None:
            self._probed = asyncio.ensure_future(self._probe())
        await asyncio.shield(self._probed)

    async def _probe(self) -> None:
        probe: Any = getattr(self.model, "probe", None)
        if probe is None:
            return
        try:
            ok = await probe()
        except ModelError as e:
            raise ModelUnreachableError(unreachable_message(self.spec, str(e))) from e
        if ok is False:
            raise ModelUnreachableError(unreachable_message(self.spec, "the probe failed"))

    async def aclose(self) -> None:
        close: Any = getattr(self.model, "aclose", None)
        if close is not None:
            await close()
        if self.cache is not None:
            self.cache.close()


def openai_client(
    spec: ModelSpec, *, max_reply_bytes: int = MAX_REPLY_BYTES
) -> OpenAICompatModel | ManagedModel:
    """A client of the spec's endpoint (native tool calls, no cache), its replies capped at
    ``max_reply_bytes``; for an alias with ``launch:``, one that starts its server on first need
    (``sandbox.models.managed``)."""
    if spec.launch is not None:
        if not spec.model:
            raise ConfigError(f"model {spec.display_name!r} needs a model name")
        return ManagedModel(spec, lambda url: endpoint_client(spec, url, max_reply_bytes))
    if not spec.model or not spec.base_url:
        raise ConfigError(f"model {spec.display_name!r} needs a model name and a base_url")
    return endpoint_client(spec, spec.base_url, max_reply_bytes)


def endpoint_client(
    spec: ModelSpec, base_url: str, max_reply_bytes: int = MAX_REPLY_BYTES
) -> OpenAICompatModel:
    """A plain client of ``spec``'s model at ``base_url``, its replies capped at
    ``max_reply_bytes``."""
    # Imported here, not at the top: the openai package costs start-up time that offline runs
    # never need.
    from agents.models.openai_compat import OpenAICompatModel

    price = spec.price
    return OpenAICompatModel(
        message_shape="toolbench" if spec.tool_calls == "toolbench" else "openai",
        max_reply_bytes=max_reply_bytes,
        model=spec.model or "",
        base_url=base_url,
        api_key=spec.api_key or None,
        name=spec.display_name,
        timeout=spec.timeout,
        retry=spec.retry,
        params=dict(spec.params) or None,
        price_prompt=price.input / MILLION if price else 0.0,
        price_completion=price.output / MILLION if price else 0.0,
        price_cached_prompt=(
            price.cached_input / MILLION if price and price.cached_input is not None else None
        ),
    )


def build_remote(spec: ModelSpec, settings: ModelSettings) -> RemoteModels:
    return RemoteModels(spec, settings)


def build_remote_simulator(spec: ModelSpec) -> ModelSimulator:
    """The endpoint playing tool APIs (``--simulator``)."""
    return ModelSimulator(openai_client(spec), name=spec.display_name)


def unreachable_message(spec: ModelSpec, reason: str) -> str:
    lines = [
        f"model {spec.display_name!r} is unreachable at {redact(spec.base_url or '')}: {reason}"
    ]
    hint = spec.start_hint or (VLLM_HINT if spec.base_url_env else None)
    start = f"start it, e.g.: {hint}" if hint else f"start one there, e.g.: {VLLM_HINT}"
    where = "; or point elsewhere: --model openai:<model>@<base_url>"
    if spec.base_url_env:
        where += f", or set {spec.base_url_env}=<base_url>"
    lines.append(f"  {start}{where}")  # the error, then one hint line
    return "\n".join(lines)
