"""A StableToolBench response cache folder -> canonical recordings.

Layout: ``<Category>/<tool>_for_<category>/<api>.json``; each file maps the Python repr of an
arguments dict (``str(dict)``) to the cached observation ``{"error": ..., "response": ...}``.
Keys are parsed with ``ast.literal_eval`` (then JSON), never ``eval``; the store re-keys them
canonically, so ``{'a': 1}`` and ``{"a": "1"}`` meet.

When the target suite already exists (e.g. imported from the query files), cached calls are
resolved onto its tools with ToolBench's name standardisation (the folder's category picks among
tools that share a name across categories); APIs it lacks are added to ``tools/stb-cache.yaml``
as ToolBench would offer an API without documentation (names and types are unknown beyond the
cache keys). The cache's keys are the arguments as StableToolBench's client sent them, in
ToolBench's parameter names, which are the names of the suite's (ToolBench) schemas. A new suite
is of ToolBench origin (suffix dispatch, ASCII-escaped observations). Recordings are JSONL:
``mock_tools`` loads no SQLite store yet.

StableToolBench treats some real responses as misses and simulates those calls instead
(``invalid_reason``, after its server's validity rule: an error, a rate limit or timeout, an
authorisation failure, a parameter error, an empty response). They are left out unless
``keep_errors`` is set, so that a suite served with ``--miss-policy simulate`` behaves as
StableToolBench's server does. May import ``sandbox.store``, ``sandbox.errors`` and ``interop``
modules.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from mock_tools.models import ApiSpec, Provenance, Recording, Response, ToolSpec
from mock_tools.names import NameResolver, standardize
from mock_tools.suite import SuiteError, load_suite
from sandbox.errors import SandboxError
from sandbox.interop.suite_writer import dump_yaml, write_recordings
from sandbox.interop.summary import ImportSummary
from sandbox.interop.toolbench_functions import kept_parameters, toolbench_function
from sandbox.interop.toolbench_queries import toolbench_meta
from sandbox.store.input_files import InputFileError, json_text, read_json

__all__ = ["LARGE_CACHE", "import_stb_cache", "invalid_reason", "parse_cache_key"]

LARGE_CACHE = 50_000
RECORDINGS_FILE = "stb-cache"


def parse_cache_key(key: str) -> dict[str, Any]:
    """The arguments dict behind a cache key; raises ``ValueError`` when it is not one."""
    text = key.strip()
    if not text:
        return {}
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        try:
            value = json_text(text)
        except json.JSONDecodeError:
            raise ValueError("neither a Python literal nor JSON") from None
    if not isinstance(value, dict):
        raise ValueError(f"a {type(value).__name__}, not an arguments dict")
    return {str(k): v for k, v in value.items()}


def cached_response(value: Any) -> Response:
    """A cached observation as a recorded response (same rule as ToolBench observations)."""
    if isinstance(value, str):
        try:
            value = json_text(value)
        except json.JSONDecodeError:
            return Response(ok=True, body=value)
    if isinstance(value, dict) and "response" in value and set(value) <= {"error", "response"}:
        error = value.get("error") or ""
        error = error if isinstance(error, str) else json.dumps(error)
        return Response(ok=error == "", body=value["response"], error=error)
    return Response(ok=True, body=value)


_UNAVAILABLE = (
    "rate limit",
    "time out",
    "timed out",
    "does not exist",
    "404",
    "504",
    "500",
    "internal error",
)
_AUTH = (
    "authoriz",
    "authenticat",
    "unauthorized",
    "blocked user",
    "unsubscribe",
    "blocked",
    "401",
    "403",
    "credential",
    "unauthenticated",
    "disabled for your subscription",
    "invalid consumer key",
)
_PARAMETER = ("parameter", "parse", "is not defined")


def invalid_reason(value: Any) -> str | None:
    """Why StableToolBench would not take a cached real response as one (None: it would).

    Its rule, in order: the observation must be ``{"error": "", "response": ...}``; a complaint
    about an unexpected keyword argument is a valid answer; then the response text (lower-cased)
    must not mention a rate limit, a timeout, a missing API or a 404/500/504 (a plain substring
    test, so a number containing 500 counts too, as it does there), an authorisation problem, or
    a parameter or parse error, and must not be empty or a 50x/429 status dump.
    """
    if isinstance(value, str):
        try:
            value = json_text(value)
        except json.JSONDecodeError:
            return "not an observation object"
    if not isinstance(value, dict) or "response" not in value or value.get("error", None) != "":
        return "an error"
    text = str(value["response"])
    low = text.lower()
    if "got an unexpected keyword argument" in low:
        return None
    if any(s in low for s in _UNAVAILABLE) or "Service Not Found" in text:
        return "unavailable (rate limit, timeout, missing API)"
    if any(s in low for s in _AUTH) or "ACCESS_DENIED" in text:
        return "an authorisation failure"
    if any(s in low for s in _PARAMETER):
        return "a parameter error"
    if not text:
        return "empty"
    if "status_code=50" in text or "status_code=429" in text:
        return "an HTTP error dump"
    return None


def _undocumented(tool: str, api: str) -> ApiSpec:
    """An API known from the cache only, as ToolBench offers an API without documentation."""
    fn = toolbench_function({"tool_name": tool, "api_name": api})
    return ApiSpec(
        name=api,
        description=fn["description"],
        parameters=kept_parameters(fn["parameters"]),
        function=fn["name"],
    )


def _tool_of(folder: str, category: str) -> str:
    for suffix in (f"_for_{standardize(category)}", f"_for_{category}"):
        if folder.endswith(suffix) and len(folder) > len(suffix):
            return folder[: -len(suffix)]
    return folder


def import_stb_cache(
    cache: Path, out: Path, name: str | None = None, *, keep_errors: bool = False
) -> ImportSummary:
    """Import a StableToolBench cache folder into the suite ``out`` (new or existing).

    Responses StableToolBench treats as misses (``invalid_reason``) are skipped unless
    ``keep_errors``."""
    if not cache.is_dir():
        raise SandboxError(
            f"{cache}: not a folder (expected <Category>/<tool>_for_<cat>/<api>.json)"
        )
    summary = ImportSummary(kind="stb-cache", out=str(out))
    existing = None
    if (out / "suite.yaml").is_file():
        try:
            existing = load_suite(out)
        except SuiteError as e:
            raise SandboxError(f"{out}: the existing suite does not load: {e}") from e
    resolver = NameResolver.for_apis(
        existing.apis if existing else {},
        {t.name: t.category for t in existing.tools.values()} if existing else None,
    )
    added: dict[str, ToolSpec] = {}
    recordings: list[Recording] = []
    files = sorted(cache.glob("*/*/*.json"))
    entries = 0
    for f in files:
        category, tool_folder, api_name = f.parent.parent.name, f.parent.name, f.stem
        tool_name = _tool_of(tool_folder, category)
        try:
            data = read_json(f)
        except InputFileError as e:  # not a regular file, not JSON, nested too deep
            summary.skip(str(f), f"malformed cache file: {e}")
            continue
        if not isinstance(data, dict):
            summary.skip(str(f), "malformed cache file: not a JSON object")
            continue
        target = resolver.resolve_call(tool_name, api_name, category)
        if target is None:
            spec = added.get(tool_name)
            if spec is None:
                spec = added[tool_name] = ToolSpec(
                    name=tool_name, category=category, apis=[_undocumented(tool_name, api_name)]
                )
            elif all(a.name != api_name for a in spec.apis):
                spec.apis.append(_undocumented(tool_name, api_name))
            target = (tool_name, api_name)
        for key, value in data.items():
            entries += 1
            try:
                args = parse_cache_key(key)
            except ValueError as e:
                summary.skip(f"{f} key {key[:60]!r}", f"malformed key: {e}")
                continue
            reason = None if keep_errors else invalid_reason(value)
            if reason is not None:
                summary.skip(f"{f} key {key[:60]!r}", f"a miss for StableToolBench: {reason}")
                continue
            recordings.append(
                Recording(
                    tool=target[0],
                    api=target[1],
                    args=args,
                    response=cached_response(value),
                    provenance=Provenance(
                        source="stabletoolbench", note=f"{category}/{tool_folder}/{f.name}"
                    ),
                )
            )
    if existing is None:
        meta = toolbench_meta(name or out.name, f"Imported from a StableToolBench cache: {cache}")
        dump_yaml(meta.model_dump(mode="json"), out / "suite.yaml")
    if added:
        dump_yaml(
            [t.model_dump(mode="json", exclude_defaults=True) for t in added.values()],
            out / "tools" / "stb-cache.yaml",
        )
    n = write_recordings(recordings, out / "recordings" / f"{RECORDINGS_FILE}.jsonl")
    summary.read = {"files": len(files), "entries": entries}
    summary.written = {
        "tools": len(added),
        "apis": sum(len(t.apis) for t in added.values()),
        "recordings": n,
    }
    if n > LARGE_CACHE:
        summary.notes.append(
            f"{n} recordings written as JSONL: mock_tools has no SQLite store to load yet"
        )
    if existing is not None:
        summary.notes.append(f"merged into the existing suite {existing.name!r}")
    return summary
