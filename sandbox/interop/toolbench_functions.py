"""ToolBench's function schemas: the one its client builds from an API's documentation, and the
API of a suite that keeps it.

**Building** (``toolbench_function``), as ToolBench's client (``rapidapi_wrapper``'s
``api_json_to_openai_json``, kept by StableToolBench) builds the function a model is offered:

- name ``<api>_for_<tool>`` (the API name standardised, ``is_`` before a reserved word; the tool
  name standardised), keeping its last 64 characters;
- description ``This is the subfunction for tool "<tool>", you can use this tool.``, followed,
  when the API has a description, by ``The description of this function is: "<text>"``: the
  description stripped, with the API's name replaced by the function name, cut to 256
  characters;
- parameters: ``properties`` and the ``required`` and ``optional`` name lists. A parameter is
  named by ``mock_tools.names.parameter_name`` (``ID`` -> ``is_id``), typed ``NUMBER`` ->
  ``integer``, ``STRING`` -> ``string``, ``BOOLEAN`` -> ``boolean`` and anything else ->
  ``string``, described by its description cut to 256 characters, and given its ``default`` as
  ``example_value`` when that is not empty (``str(default) != ""``). Optional parameters are
  offered only when the API has required ones (ToolBench reads them inside that test).

**Keeping** (``api_from_function``): the suite's API is that function: ``function`` its name,
``description`` its description, ``parameters`` its parameters object marked
``TOOLBENCH_NAMES`` (so any other spelling of a parameter name reaches it). The query importer
builds the function and keeps it; the answer importer keeps the function its file offered. For the
same API both write the same schema, and ``sandbox.tool_envs.http`` offers exactly ToolBench's
function. StableToolBench's client starts both lists with an empty name (``[""]``); read back,
those entries are dropped (``--preset stabletoolbench`` offers them again).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mock_tools.models import ApiSpec
from mock_tools.names import (
    FUNCTION_NAME_MAX,
    TOOLBENCH_NAMES,
    api_identifier,
    function_name,
    parameter_name,
    standardize,
)

__all__ = [
    "DESCRIPTION_MAX",
    "FunctionApi",
    "api_from_function",
    "kept_parameters",
    "toolbench_function",
    "toolbench_parameters",
]

DESCRIPTION_MAX = 256
"""ToolBench cuts function and parameter descriptions here (``description_max_length``)."""

_TYPES = {"NUMBER": "integer", "STRING": "string", "BOOLEAN": "boolean"}
_SUBFUNCTION = re.compile(r'^This is the subfunction for tool "(?P<tool>[^"]*)"', re.S)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _parameter(param: Mapping[str, Any]) -> dict[str, Any]:
    kind = param.get("type")
    prop: dict[str, Any] = {
        "type": _TYPES.get(kind, "string") if isinstance(kind, str) else "string",
        "description": _text(param.get("description"))[:DESCRIPTION_MAX],
    }
    if "default" in param and str(param["default"]) != "":
        prop["example_value"] = param["default"]
    return prop


def toolbench_parameters(
    required: list[Mapping[str, Any]], optional: list[Mapping[str, Any]]
) -> dict[str, Any]:
    """The ``parameters`` object ToolBench offers for an API's documented parameters."""
    out: dict[str, Any] = {"type": "object", "properties": {}, "required": [], "optional": []}
    if not required:
        return out  # ToolBench reads the optional ones only when there are required ones
    for kind, params in (("required", required), ("optional", optional)):
        for param in params:
            name = parameter_name(str(param.get("name") or ""))
            out["properties"][name] = _parameter(param)
            out[kind].append(name)
    return out


def toolbench_function(entry: Mapping[str, Any], tool: str | None = None) -> dict[str, Any]:
    """The function ToolBench offers for one ``api_list`` entry (``api_name``,
    ``api_description``, ``required_parameters``, ``optional_parameters``); ``tool`` is the
    tool's name (default: the entry's ``tool_name``)."""
    tool_name = standardize(tool if tool is not None else _text(entry.get("tool_name")))
    api = _text(entry.get("api_name"))
    name = f"{api_identifier(api)}_for_{tool_name}"[-FUNCTION_NAME_MAX:]
    description = f'This is the subfunction for tool "{tool_name}", you can use this tool.'
    text = _text(entry.get("api_description")).strip()
    if text:
        cut = (text.replace(api, name) if api else text)[:DESCRIPTION_MAX]
        description += f'The description of this function is: "{cut}"'
    required = entry.get("required_parameters") or []
    optional = entry.get("optional_parameters") or []
    return {
        "name": name,
        "description": description,
        "parameters": toolbench_parameters(list(required), list(optional)),
    }


@dataclass(frozen=True)
class FunctionApi:
    function: str
    tool: str
    api: ApiSpec
    name_matches: bool
    """Whether ``function_name(tool, api)`` rebuilds ``function`` exactly."""


def kept_parameters(params: Mapping[str, Any]) -> dict[str, Any]:
    """A ToolBench parameters object as a suite keeps it: StableToolBench's empty names dropped
    from ``required`` and ``optional``, and marked ``TOOLBENCH_NAMES``."""
    out = dict(params)
    for kind in ("required", "optional"):
        names = out.get(kind)
        if isinstance(names, list):
            out[kind] = [n for n in names if n != ""]
    out[TOOLBENCH_NAMES] = True
    return out


def api_from_function(fn: Mapping[str, Any], api_name: str | None = None) -> FunctionApi:
    """The suite API that keeps one ToolBench function (tool from the description's
    ``subfunction for tool`` text, else the name's ``_for_`` suffix; API name ``api_name``, else
    the function name without that suffix). ``ValueError`` when malformed."""
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("function without a name")
    description = _text(fn.get("description"))
    m = _SUBFUNCTION.match(description)
    if m is not None and m.group("tool"):
        tool = standardize(m.group("tool"))
    elif "_for_" in name:
        tool = name.rsplit("_for_", 1)[1]
    else:
        raise ValueError(f"cannot tell the tool of function {name!r}")
    suffix = f"_for_{tool}"
    api = name[: -len(suffix)] if name.endswith(suffix) and len(name) > len(suffix) else name
    params = fn.get("parameters") or {"type": "object", "properties": {}}
    if not isinstance(params, Mapping):
        raise ValueError(f"function {name!r}: parameters is not an object")
    spec = ApiSpec(
        name=api_name or api,
        description=description,
        parameters=kept_parameters(params),
        function=name,
    )
    return FunctionApi(
        function=name,
        tool=tool,
        api=spec,
        name_matches=function_name(tool, api) == name[-FUNCTION_NAME_MAX:],
    )
