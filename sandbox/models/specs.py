"""Model names resolve here: ``models.yaml`` aliases and ad hoc endpoints become a ``ModelSpec``.

::

    qwen-7b, gpt-4o-mini, ...          aliases from models.yaml (or SANDBOX_MODELS_FILE)
    openai:<model>@<base_url>          any OpenAI-compatible endpoint, native tool calls
    openai-text:<model>@<base_url>     the same through the Thought/Action text adapter
    reference                          offline, follows the task's reference path
    noisy-reference[:RATE]             offline, seeded mistakes at RATE
    replay:<run folder>                offline, replays the assistant turns of a recorded run
    fork                               a kind named directly (its options say what to fork)
    my-kind, my_pkg.kinds:MY_KIND      a plugin's direct kind, by entry point or path

An alias names a ``kind`` (``sandbox.models.provider.MODEL_KINDS``); the kind builds the models.
This module and the CLI are the only places that read environment variables; everything below
receives resolved settings. May import ``sandbox.models.provider``, ``sandbox.errors`` and
``agents`` only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents.models.retry import RetryPolicy
from agents.registry import UnknownName, is_path
from mock_tools.yaml_text import MAX_YAML_BYTES, load_yaml, yaml_error_line
from sandbox.errors import ConfigError
from sandbox.models.launch import LaunchSpec
from sandbox.models.prices import Price, lookup_price
from sandbox.models.provider import MODEL_KINDS, KindName, ModelSpec, ToolCalls
from sandbox.store.error_text import first_error
from sandbox.store.paths import read_regular_file
from sandbox.store.redact import redact

__all__ = [
    "DEFAULT_MODELS_FILE",
    "ModelEntry",
    "ModelSpec",
    "base_url_env_var",
    "load_model_entries",
    "resolve_model",
]

DEFAULT_MODELS_FILE = Path(__file__).resolve().parents[2] / "models.yaml"
_AD_HOC = re.compile(r"^(openai|openai-text):(?P<model>[^@]+)@(?P<url>\S+)$")


class ModelEntry(BaseModel):
    """One alias of ``models.yaml``."""

    model_config = ConfigDict(extra="forbid")

    kind: KindName
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    tool_calls: ToolCalls = "native"
    timeout: float = Field(default=120.0, gt=0)
    retry: RetryPolicy | None = Field(
        default=None,
        description="How the client retries transient failures (max_retries, initial, "
        "max_backoff...); None: the client's default.",
    )
    params: dict[str, Any] = Field(default_factory=dict)
    start_hint: str | None = None
    launch: LaunchSpec | None = Field(
        default=None,
        description="How to start the server when none answers at base_url "
        "(sandbox.models.launch).",
    )
    unescape_html: bool = Field(
        default=False,
        description="The server HTML-escapes its prompts (llama-cpp-python's "
        "chatml-function-calling format): unescape the model's replies "
        "(sandbox.models.entities).",
    )
    max_seconds: float | None = Field(
        default=None,
        gt=0,
        description="Per-episode wall-clock seconds of runs of this model when the run sets "
        "no --max-seconds (a bound for local servers whose generations can run on).",
    )
    price: Price | None = Field(default=None, description="USD per 1M tokens.")


def _alias_entry(name: str, entries: Mapping[str, ModelEntry]) -> tuple[str, ModelEntry, str]:
    """The alias, its entry and the ``:`` argument of ``name``: an alias of ``models.yaml``, or a
    kind usable by its own name (``direct``): registered, a plugin's, or ``package.module:NAME``
    (a path takes no argument). ``ConfigError`` for anything else."""
    alias, _, arg = name.partition(":")
    if alias in entries:
        return alias, entries[alias], arg
    try:
        direct = MODEL_KINDS.find(alias)
        if direct is None and is_path(name):
            alias, arg, direct = name, "", MODEL_KINDS.find(name)
    except UnknownName as e:
        raise ConfigError(str(e)) from e
    if direct is not None and direct.direct:
        kind = direct.name if alias in MODEL_KINDS else alias  # a plugin: the name it resolves by
        return alias, ModelEntry(kind=kind), arg
    known = ", ".join(sorted(entries))
    raise ConfigError(
        f"unknown model {alias!r}; known models: {known}; "
        "or any OpenAI-compatible endpoint as openai:<model>@<base_url>"
    )


def base_url_env_var(alias: str) -> str:
    """``SANDBOX_<ALIAS>_BASE_URL`` with the alias upper-cased and non-alphanumerics as ``_``."""
    return f"SANDBOX_{_env_part(alias)}_BASE_URL"


def _env_part(alias: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", alias.upper()).strip("_")


def load_model_entries(
    path: str | Path | None = None, env: Mapping[str, str] | None = None
) -> dict[str, ModelEntry]:
    """Aliases from ``models.yaml`` (or ``path``), then from ``SANDBOX_MODELS_FILE`` over them."""
    env = env or {}
    entries = _read_entries(Path(path) if path else DEFAULT_MODELS_FILE)
    extra = env.get("SANDBOX_MODELS_FILE")
    if extra:
        entries.update(_read_entries(Path(extra)))
    return entries


def _read_entries(path: Path) -> dict[str, ModelEntry]:
    try:
        data = load_yaml(read_regular_file(path, MAX_YAML_BYTES).decode("utf-8")) or {}
    except OSError as e:
        raise ConfigError(f"cannot read the model registry {path}: {e.strerror}") from e
    except UnicodeDecodeError as e:
        raise ConfigError(f"the model registry {path} is not UTF-8 text (byte {e.start})") from e
    except ValueError as e:  # a FIFO, a device, over the YAML size limit
        raise ConfigError(f"the model registry {e}") from e
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: invalid YAML: {yaml_error_line(e)}") from e
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict):
        raise ConfigError(f"{path}: expected a top-level 'models:' mapping of aliases")
    out: dict[str, ModelEntry] = {}
    for alias, raw in models.items():
        try:
            out[str(alias)] = ModelEntry.model_validate(raw or {})
        except ValidationError as e:
            err = e.errors()[0]
            loc = ".".join(str(x) for x in err["loc"])
            raise ConfigError(f"{path}: models.{alias}.{loc}: {err['msg']}") from e
    return out


def _checked_url(url: str, where: str) -> str:
    """``url`` when it is an http(s) URL with a host and a valid port; ``ConfigError`` naming
    ``where`` it came from (a model name, an environment variable) otherwise."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises for a port out of range)
    except ValueError as e:
        raise ConfigError(f"{redact(where)}: {redact(url)} is no URL ({e})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"{redact(where)}: {redact(url)} is no http(s) URL of an endpoint "
            "(e.g. http://localhost:8000/v1)"
        )
    return url


_HEADER_SAFE = re.compile(r"[\x21-\x7e]+")
"""What an API key may hold: visible ASCII, as an HTTP header carries it."""


def _checked_key(key: str | None, var: str) -> str | None:
    """``key`` without surrounding whitespace (a newline a file left); ``ConfigError`` when it
    holds what no HTTP header can carry. The key itself is never shown."""
    if key is None or not key.strip():
        return None
    key = key.strip()
    if not _HEADER_SAFE.fullmatch(key):
        raise ConfigError(
            f"{var} holds a character an HTTP header cannot carry (a space, a control or a "
            "non-ASCII character): set it to the key alone"
        )
    return key


def _check_params(alias: str, options: type[BaseModel] | None, params: Mapping[str, Any]) -> None:
    """``ConfigError`` in one line when the kind's options class refuses ``params``."""
    if options is None:
        return
    try:
        options.model_validate(dict(params))
    except ValidationError as e:
        takes = ", ".join(options.model_fields) or "none"
        raise ConfigError(
            f"model {alias!r}: {first_error(e)} (--model-option; it takes: {takes})"
        ) from None


def _ad_hoc_spec(
    name: str, ad_hoc: re.Match[str], options: Mapping[str, Any] | None, env: Mapping[str, str]
) -> ModelSpec:
    """The spec of ``openai:<model>@<base_url>`` (``openai-text:`` for the text adapter)."""
    base_url = _checked_url(ad_hoc["url"].rstrip("/"), name)
    price, source = lookup_price(ad_hoc["model"], base_url)
    return ModelSpec(
        name=name,
        kind="openai",
        model=ad_hoc["model"],
        base_url=base_url,
        tool_calls="text" if name.startswith("openai-text:") else "native",
        params=dict(options or {}),
        price=price,
        price_source=source,
        api_key=_checked_key(env.get("SANDBOX_API_KEY"), "SANDBOX_API_KEY"),
    )


_REMOTE_ONLY = ("launch", "base_url", "api_key_env")
"""Settings of an alias that only a model reached over the network uses."""


def _check_offline(alias: str, entry: ModelEntry) -> None:
    """``ConfigError`` for an offline alias that sets what only a remote one uses (``launch:``
    would start no server, silently)."""
    given = [f for f in _REMOTE_ONLY if getattr(entry, f) is not None]
    if given:
        raise ConfigError(
            f"model {alias!r} of kind {entry.kind!r} runs offline and uses no "
            f"{', '.join(given)} (settings of a model served over HTTP, kind openai): drop "
            "them or change the kind"
        )


def resolve_model(
    name: str,
    *,
    options: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    models_file: str | Path | None = None,
) -> ModelSpec:
    """Turn a model name (and the run's ``model_options``) into a ``ModelSpec``.

    ``ConfigError`` for an unknown name, a bad ``:`` argument or a missing API key.
    """
    env = env or {}
    name = name.strip()
    ad_hoc = _AD_HOC.match(name)
    if ad_hoc:
        return _ad_hoc_spec(name, ad_hoc, options, env)
    if name.startswith(("openai:", "openai-text:")):
        raise ConfigError(
            f"cannot parse model {name!r}: write openai:<model>@<base_url>, "
            "e.g. openai:Qwen/Qwen2.5-7B-Instruct@http://localhost:8000/v1"
        )
    entries = load_model_entries(models_file, env)
    alias, entry, arg = _alias_entry(name, entries)
    kind = MODEL_KINDS.get(entry.kind)
    params = {**entry.params, **(options or {})}
    if kind.parse_arg is not None:
        params.update(kind.parse_arg(arg, name))
    elif arg:
        raise ConfigError(f"model {alias!r} takes no ':' argument (got {name!r})")
    _check_params(alias, kind.options, params)
    if not kind.remote:
        _check_offline(alias, entry)
    url_var = base_url_env_var(alias) if kind.remote else None
    base_url = env.get(url_var) if url_var else None
    api_key = None
    if kind.remote and entry.api_key_env:
        api_key = _checked_key(env.get(entry.api_key_env), entry.api_key_env)
    if kind.remote and entry.api_key_env and not api_key:
        raise ConfigError(
            f"model {alias!r} needs an API key: set {entry.api_key_env} in the environment"
        )
    model = env.get(f"SANDBOX_{_env_part(alias)}_MODEL") or entry.model
    url = (base_url or entry.base_url or "").rstrip("/") or None
    if url is not None:
        _checked_url(url, url_var or alias)
    price, source = entry.price, "models.yaml"
    if not kind.remote:
        source = "offline model: cost 0"
    elif price is None:
        price, source = lookup_price(model or alias, url)
    return ModelSpec(
        name=name,
        kind=entry.kind,
        model=model,
        base_url=url,
        price=price,
        price_source=source,
        tool_calls=entry.tool_calls,
        timeout=entry.timeout,
        retry=entry.retry,
        params=params,
        start_hint=entry.start_hint,
        launch=entry.launch if kind.remote else None,
        unescape_html=entry.unescape_html,
        max_seconds=entry.max_seconds,
        base_url_env=url_var,
        api_key=api_key or None,
    )
