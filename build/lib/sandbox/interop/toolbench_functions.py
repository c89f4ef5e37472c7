"""ToolBench's OpenAI function schemas (``<api>_for_<tool>``) -> tools and APIs of a suite.

An answer file lists the functions its model was offered. Each description starts with
``This is the subfunction for tool "<tool>"``, which names the (standardised) tool; the API is
the function name without the ``_for_<tool>`` suffix. Names stay in ToolBench's standardised
spelling, so ``mock_tools.names.function_name(tool, api)`` gives back the original function name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from mock_tools.models import ApiSpec
from mock_tools.names import FUNCTION_NAME_MAX, function_name, standardize

__all__ = ["FunctionApi", "api_from_function"]

_SUBFUNCTION = re.compile(r'^This is the subfunction for tool "(?P<tool>[^"]*)"', re.S)
_DESCRIPTION = re.compile(r'The description of this function is: "(?P<desc>.*)"\s*$', re.S)
_KEEP = ("type", "description", "enum", "items", "properties", "required", "default")


@dataclass(frozen=True)
class FunctionApi:
    function: str
    tool: str
    api: ApiSpec
    name_matches: bool
    """Whether ``function_name(tool, api)`` rebuilds ``function`` exactly."""


def api_from_function(fn: dict[str, Any]) -> FunctionApi:
    """Recover tool and API from one function schema; raises ``ValueError`` when malformed."""
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("function without a name")
    description = str(fn.get("description") or "")
    m = _SUBFUNCTION.match(description)
    if m is not None and m.group("tool"):
        tool = standardize(m.group("tool"))
    elif "_for_" in name:
        tool = name.rsplit("_for_", 1)[1]
    else:
        raise ValueError(f"cannot tell the tool of function {name!r}")
    suffix = f"_for_{tool}"
    api = name[: -len(suffix)] if name.endswith(suffix) and len(name) > len(suffix) else name
    d = _DESCRIPTION.search(description)
    api_doc = d.group("desc") if d else description
    params = fn.get("parameters") or {}
    if not isinstance(params, dict):
        raise ValueError(f"function {name!r}: parameters is not an object")
    spec = ApiSpec(name=api, description=api_doc.strip(), parameters=_json_schema(params))
    rebuilt = function_name(tool, api)
    return FunctionApi(
        function=name,
        tool=tool,
        api=spec,
        name_matches=rebuilt == name[-FUNCTION_NAME_MAX:],
    )


def _json_schema(params: dict[str, Any]) -> dict[str, Any]:
    """ToolBench's parameter object as plain JSON Schema (``example_value`` -> ``examples``)."""
    properties: dict[str, Any] = {}
    for key, prop in (params.get("properties") or {}).items():
        if not isinstance(prop, dict):
            continue
        clean = {k: v for k, v in prop.items() if k in _KEEP}
        if clean.get("description") == "":
            del clean["description"]
        example = prop.get("example_value")
        if example not in (None, ""):
            clean["examples"] = [example]
        properties[str(key)] = clean
    required = [r for r in params.get("required") or [] if r in properties]
    return {"type": "object", "properties": properties, "required": required}
