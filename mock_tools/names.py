"""ToolBench's name standardisation and a resolver from any spelling to a suite's (tool, api).

ToolBench (and StableToolBench after it) rewrites names before showing them to a model:

- ``standardize``: every character outside ``a-z A-Z 0-9 _`` and the CJK block becomes ``_``
  (ToolBench's character class also lets ``^`` through; kept here so names match), runs of ``_``
  collapse to one, the result is lowercased, leading/trailing ``_`` are removed, and a name that
  starts with a digit gets the prefix ``get_``;
- API and parameter names that collide with Python words (``from``, ``class``, ``id``...) get the
  prefix ``is_`` (ToolBench's ``change_name``): a parameter ``ID`` is offered as ``is_id``,
  ``driverId`` as ``driverid`` (``parameter_name``);
- the function offered to the model is ``<api>_for_<tool>``, keeping its **last** 64 characters;
- StableToolBench's server and cache name a category with spaces, commas and slashes made ``_``
  (``category_folder``) and may call a tool ``<tool>_for_<category>``.

``NameResolver`` accepts the suite's own names, their standardised forms and function names, so a
ToolBench or StableToolBench client can call a suite without knowing its exact spelling
(``resolve_call`` also reads the category such a client sends). A parameters schema marked with
``TOOLBENCH_NAMES`` names its properties as ToolBench offers them, and ``toolbench_arguments``
reads any other spelling of those names onto them. Pure; imports nothing from the project.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from rapidfuzz import fuzz, process

FUNCTION_NAME_MAX = 64
NAME_MAX = 256  # longer tool or API names are rejected before any lookup (see MockToolService)
SUGGEST_QUERY_MAX = 64  # characters of a wrong name compared when suggesting
SUGGEST_SHORTLIST = 24  # candidates kept by the cheap first pass
_OUTSIDE = re.compile(r"[^\u4e00-\u9fa5^a-zA-Z0-9_]")
_RUNS = re.compile(r"_+")
_CHANGED = frozenset({"from", "class", "return", "false", "true", "id", "and"})
"""ToolBench's ``change_name`` list: these names get an ``is_`` prefix."""
_RESERVED = _CHANGED | {""}

RAW_ARGUMENTS = "x-raw-arguments"
"""A parameters schema with this key set to true takes its arguments exactly as the caller gave
them: they are not canonicalised (``mock_tools.canonical``) nor checked against the schema, and
the tool decides what it accepts (BFCL's API classes, whose executor calls them as Python does).
Agents are offered the schema without the key."""

TOOLBENCH_NAMES = "x-toolbench-names"
"""A parameters schema with this key set to true names its properties as ToolBench's client offers
them (``parameter_name``): an argument spelled otherwise (``ID`` for ``is_id``) is read as the
property its ToolBench name is (``toolbench_arguments``). ToolBench and StableToolBench importers
mark the schemas they write; agents are offered the schema without the key."""

__all__ = [
    "FUNCTION_NAME_MAX",
    "NAME_MAX",
    "RAW_ARGUMENTS",
    "TOOLBENCH_NAMES",
    "NameResolver",
    "api_identifier",
    "category_folder",
    "function_name",
    "parameter_name",
    "split_function_name",
    "standardize",
    "toolbench_arguments",
    "unique_function_names",
]


def standardize(name: str) -> str:
    """ToolBench's standardised form of a tool, API or category name."""
    text = _RUNS.sub("_", _OUTSIDE.sub("_", name)).lower().strip("_")
    if text[:1].isdigit():
        text = "get_" + text
    return text


def api_identifier(api: str) -> str:
    """The API part of a function name: standardised, ``is_`` before reserved words."""
    text = standardize(api)
    return "is_" + text if text in _RESERVED else text


def parameter_name(name: str) -> str:
    """A parameter's name as ToolBench's client offers (and StableToolBench's client sends) it:
    ``standardize``, then ``is_`` before a reserved word (``ID`` -> ``is_id``)."""
    text = standardize(name)
    return "is_" + text if text in _CHANGED else text


def toolbench_arguments(args: dict[str, Any], properties: Mapping[str, Any]) -> dict[str, Any]:
    """``args`` with every key that is not a property but whose ``parameter_name`` is one renamed
    to that property (``ID``, ``Id`` -> ``is_id``), in place; a key whose property is given too,
    or was already reached by an earlier key, stays as it is."""
    if all(k in properties for k in args):
        return args
    out: dict[str, Any] = {}
    for key, value in args.items():
        if key not in properties:
            target = parameter_name(str(key))
            if target in properties and target not in args and target not in out:
                key = target
        out[key] = value
    return out


def category_folder(category: str) -> str:
    """A category as StableToolBench's server and cache folders spell it (``standardize_category``):
    spaces, commas and slashes become ``_``, then one pass turns ``__`` into ``_``; case kept."""
    text = category.replace(" ", "_").replace(",", "_").replace("/", "_")
    return text.replace("__", "_")


def without_category(tool: str, category: str) -> str:
    """``tool`` without a ``_for_<category>`` suffix (any spelling of the category), as
    StableToolBench's server accepts ``<tool>_for_<category>`` for a tool."""
    if not category:
        return tool
    low = tool.lower()
    for form in {category_folder(category), standardize(category), category}:
        suffix = f"_for_{form}".lower()
        if form and low.endswith(suffix) and len(tool) > len(suffix):
            return tool[: -len(suffix)]
    return tool


def function_name(tool: str, api: str) -> str:
    """``<api>_for_<tool>`` as ToolBench builds it, cut to its last 64 characters."""
    return f"{api_identifier(api)}_for_{standardize(tool)}"[-FUNCTION_NAME_MAX:]


def split_function_name(name: str) -> tuple[str, str] | None:
    """``(tool, api)`` whose ``function_name`` is exactly ``name``, or None.

    The inverse of ``function_name`` for names in its form (``current_for_weather`` ->
    ``("weather", "current")``); the last ``_for_`` that gives an exact round trip wins.
    """
    parts = name.split("_for_")
    for i in range(len(parts) - 1, 0, -1):
        api, tool = "_for_".join(parts[:i]), "_for_".join(parts[i:])
        if api and tool and function_name(tool, api) == name:
            return tool, api
    return None


def unique_function_names(
    apis: Iterable[tuple[str, str, str | None]],
) -> dict[str, tuple[str, str]]:
    """Function name -> ``(tool, api)`` for ``(tool, api, explicit name or None)`` entries.

    A name is the explicit one, else ``function_name(tool, api)``; a name taken by an earlier
    entry gets ``_2``, ``_3``... (cut to stay within 64 characters). Both the OpenAI tools of an
    episode and the MCP tools of a server are named here, so they agree.
    """
    out: dict[str, tuple[str, str]] = {}
    for tool, api, explicit in apis:
        if (tool, api) in out.values():
            continue
        base = name = explicit or function_name(tool, api)
        n = 1
        while name in out:
            n += 1
            name = f"{base[: FUNCTION_NAME_MAX - len(str(n)) - 1]}_{n}"
        out[name] = (tool, api)
    return out


class NameResolver:
    """Maps names in any supported spelling to the suite's exact ``(tool, api)``.

    Exact names win over standardised ones; when two APIs standardise to the same text the first
    one (in catalog order) keeps the standardised spelling, the other stays reachable exactly.
    """

    def __init__(
        self,
        pairs: Iterable[tuple[str, str]],
        functions: Mapping[str, tuple[str, str]] | None = None,
        categories: Mapping[str, str] | None = None,
    ) -> None:
        """``functions``: explicit function names (``ApiSpec.function``), resolved first;
        ``categories``: each tool's category, which tells apart tools that share their
        ToolBench names (``resolve_call``)."""
        self._pairs: list[tuple[str, str]] = list(pairs)
        self._tools: dict[str, str] = {}
        self._apis: dict[str, dict[str, str]] = {}
        self._functions: dict[str, tuple[str, str]] = dict(functions or {})
        self._categories = {t: standardize(c) for t, c in (categories or {}).items()}
        self._sharing: dict[str, list[tuple[str, str]]] = {}
        """Function name -> every API that has it, for the APIs whose name is shared."""
        self._function_of: dict[tuple[str, str], str] = {}
        for name, pair in (functions or {}).items():
            self._sharing.setdefault(name, []).append(pair)
            self._function_of.setdefault(pair, name)
        for tool, api in self._pairs:
            self._tools.setdefault(tool, tool)
            per_tool = self._apis.setdefault(tool, {})
            per_tool.setdefault(api, api)
        for tool, api in self._pairs:
            self._tools.setdefault(standardize(tool), tool)
            per_tool = self._apis[tool]
            per_tool.setdefault(standardize(api), api)
            per_tool.setdefault(api_identifier(api), api)
            full = f"{api_identifier(api)}_for_{standardize(tool)}"
            self._functions.setdefault(full, (tool, api))
            self._functions.setdefault(full[-FUNCTION_NAME_MAX:], (tool, api))
            self._functions.setdefault(f"{api}_for_{tool}", (tool, api))
            self._function_of.setdefault((tool, api), full[-FUNCTION_NAME_MAX:])

    @classmethod
    def for_apis(
        cls,
        apis: Mapping[tuple[str, str], object],
        categories: Mapping[str, str] | None = None,
    ) -> NameResolver:
        """A resolver over a suite's ``apis`` (``ApiSpec``s), explicit function names included;
        ``categories`` maps each tool to its category."""
        explicit: dict[str, tuple[str, str]] = {}
        for pair, spec in apis.items():
            name = getattr(spec, "function", None)
            if isinstance(name, str) and name:
                explicit.setdefault(name, pair)
        resolver = cls(apis.keys(), explicit, categories)
        for pair, spec in apis.items():
            name = getattr(spec, "function", None)
            if isinstance(name, str) and name and explicit[name] != pair:
                resolver._sharing[name].append(pair)
        return resolver

    def tool(self, name: str) -> str | None:
        """The suite's tool name for ``name`` (exact or standardised), or None."""
        return self._tools.get(name) or self._tools.get(standardize(name))

    def resolve(self, tool: str, api: str) -> tuple[str, str] | None:
        """``(tool, api)`` in any spelling; ``api`` may also be a ``<api>_for_<tool>`` name."""
        exact = self._tools.get(tool)
        if exact is not None and api in self._apis[exact]:
            return exact, self._apis[exact][api]
        found = self.tool(tool)
        if found is not None:
            per_tool = self._apis[found]
            hit = per_tool.get(api) or per_tool.get(standardize(api))
            if hit is not None:
                return found, hit
        pair = self.resolve_function(api)
        if pair is not None and (found is None or pair[0] == found):
            return pair
        return None

    def resolve_function(self, name: str) -> tuple[str, str] | None:
        """The ``(tool, api)`` behind a function name such as ``get_weather_for_weatherly``."""
        return self._functions.get(name) or self._functions.get(standardize(name))

    def resolve_call(self, tool: str, api: str, category: str = "") -> tuple[str, str] | None:
        """A StableToolBench ``/virtual`` call's ``(tool, api)``: ``resolve``, where ``tool`` may
        also be ``<tool>_for_<category>`` and, when several tools share the ToolBench names
        called (one tool name in two categories), the one in ``category`` wins."""
        tool = without_category(tool, category)
        pair = self.resolve(tool, api)
        if not category:
            return pair
        names = [self._function_of[pair]] if pair is not None else []
        if tool:
            names.append(f"{api_identifier(api)}_for_{standardize(tool)}"[-FUNCTION_NAME_MAX:])
        wanted = standardize(category)
        for name in names:
            for candidate in self._sharing.get(name, []):
                if self._categories.get(candidate[0]) == wanted:
                    return candidate
        if pair is None:
            shared = [c for n in names for c in self._sharing.get(n, [])]
            return shared[0] if shared else None
        return pair

    def suggest(self, tool: str, api: str | None = None, limit: int = 3) -> list[str]:
        """The closest existing names, as ``tool/api`` (or ``tool``) strings, best first."""
        found = self.tool(tool)
        if found is not None and api is not None:
            choices = [f"{found}/{a}" for t, a in self._pairs if t == found]
            query = f"{found}/{api}"
        elif api is None:
            choices = list(dict.fromkeys(t for t, _ in self._pairs))
            query = tool
        else:
            choices = [f"{t}/{a}" for t, a in self._pairs]
            query = f"{tool}/{api}"
        return _closest(query[:SUGGEST_QUERY_MAX], choices, limit)


def _closest(query: str, choices: list[str], limit: int) -> list[str]:
    """The ``limit`` choices closest to ``query``, best first, at a bounded cost.

    A cheap first pass (plain edit-distance ratio, linear in the catalog) keeps a short list, and
    only that list is ranked by the costlier weighted ratio; with the query cut to
    ``SUGGEST_QUERY_MAX`` characters a suggestion over ToolBench's 16,000 APIs costs about a
    millisecond, whatever the caller sent.
    """
    if len(choices) > SUGGEST_SHORTLIST:
        first = process.extract(query, choices, scorer=fuzz.ratio, limit=SUGGEST_SHORTLIST)
        choices = [m[0] for m in first]
    matches = process.extract(query, choices, scorer=fuzz.WRatio, limit=limit)
    return [m[0] for m in sorted(matches, key=lambda m: (-m[1], m[0]))]
