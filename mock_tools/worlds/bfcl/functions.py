"""BFCL's function docs as the functions a model is offered.

BFCL's docs (``data/multi_turn_func_doc/*.json``) are in its own dialect of JSON Schema (types
``dict``, ``float``, ``tuple``...). BFCL offers them to a function-calling model through its
OpenAI handler; ``offered_function`` makes the same function: the description with BFCL's Python
hint appended, the parameters typed as ``object``, each property's type mapped to JSON Schema's
(``float`` to ``number`` with ``format: float`` and a note in its description; an unknown type to
``string``), nested properties and array items likewise. The parameters carry
``RAW_ARGUMENTS``: BFCL's executor calls the method with the arguments exactly as the model gave
them, so the sandbox neither canonicalises nor checks them against the schema (a call Python
refuses is an error answer, as in BFCL). Pure; imports ``mock_tools.names``.
"""

from __future__ import annotations

import copy
from typing import Any

from mock_tools.names import RAW_ARGUMENTS

__all__ = ["PYTHON_HINT", "offered_function"]

PYTHON_HINT = " Note that the provided function is in Python 3 syntax."

_TYPES = {
    "integer": "integer",
    "number": "number",
    "float": "number",
    "string": "string",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "dict": "object",
    "object": "object",
    "tuple": "array",
    "any": "string",
}


def offered_function(doc: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """A BFCL function doc as ``(name, description, parameters)`` (see the module docstring)."""
    name = str(doc.get("name", ""))
    description = str(doc.get("description", "")) + PYTHON_HINT
    params = copy.deepcopy(doc.get("parameters") or {})
    if not isinstance(params, dict):
        params = {}
    params["type"] = "object"
    props = params.get("properties")
    params["properties"] = _cast(props) if isinstance(props, dict) else {}
    params[RAW_ARGUMENTS] = True
    return name, description, params


def _cast(properties: dict[str, Any]) -> dict[str, Any]:
    for value in properties.values():
        if not isinstance(value, dict):
            continue
        kind = value.get("type")
        if kind is None:
            value["type"] = "string"
        else:
            if kind == "float":
                value["format"] = "float"
                value["description"] = str(value.get("description", "")) + (
                    " This is a float type value."
                )
            value["type"] = _TYPES.get(str(kind), "string")
        if value["type"] in ("array", "object"):
            if isinstance(value.get("properties"), dict):
                value["properties"] = _cast(value["properties"])
            elif isinstance(value.get("items"), dict):
                items = value["items"]
                items["type"] = _TYPES.get(str(items.get("type")), "string")
                if items["type"] == "array" and isinstance(items.get("items"), dict):
                    inner = items["items"]
                    inner["type"] = _TYPES.get(str(inner.get("type")), "string")
                elif items["type"] == "object" and isinstance(items.get("properties"), dict):
                    items["properties"] = _cast(items["properties"])
    return properties
