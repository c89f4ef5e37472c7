"""Reading a JSON request body over raw ASGI, with a clear 4xx for every way it can be wrong.

``read_body(receive, limit, content_length)`` collects the body (413 ``body_too_large`` past
``limit`` bytes, announced or streamed); ``check_content_type(value)`` refuses a body declared as
something other than JSON (415 ``unsupported_media_type``); ``decode_json(raw)`` parses it with
``orjson`` (400 ``malformed_json`` for bad JSON or text that is not UTF-8, 422 ``too_deep`` for
nesting deeper than ``MAX_DEPTH``). An empty body is ``{}`` (no arguments).

Accepted content types: none at all (many clients send none), ``application/json`` and any
``+json`` type, ``text/plain`` and ``application/x-www-form-urlencoded`` (what ``curl -d``
declares). Whatever ``orjson`` refuses is given to the standard library's parser, which also
takes UTF-16/32 text with a byte-order mark; such text must still encode as UTF-8 (no lone
surrogates). Numbers JSON cannot hold are refused by both (400 ``malformed_json`` naming the
number): ``NaN``, ``Infinity``, ``-Infinity`` and literals too large for a double such as
``1e999``, which the standard library would otherwise read as infinity
(``mock_tools.json_numbers``).

Errors are ``mock_tools.service.Rejected``. Imports orjson, the service's ``Rejected``,
``errors.limit_message`` and ``json_numbers`` only.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from mock_tools.errors import limit_message
from mock_tools.json_numbers import finite_float, reject_constant
from mock_tools.service import Rejected

__all__ = ["JSON_MEDIA_TYPES", "MAX_DEPTH", "check_content_type", "decode_json", "read_body"]

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects a body may have (the body itself is depth 1)."""

JSON_MEDIA_TYPES = frozenset(
    {"application/json", "text/plain", "application/x-www-form-urlencoded"}
)

Receive = Callable[[], Awaitable[dict[str, Any]]]


class Disconnected(Exception):
    """The client went away before its body arrived: nothing to answer."""


def too_large(limit: int) -> Rejected:
    return Rejected(413, "body_too_large", f"request body over {limit} bytes")


def check_content_type(value: str | None) -> None:
    """415 for a body declared as another media type than JSON (none at all is fine)."""
    if value is None:
        return
    media = value.split(";", 1)[0].strip().lower()
    if not media or media in JSON_MEDIA_TYPES or media.endswith("+json"):
        return
    raise Rejected(
        415,
        "unsupported_media_type",
        f"request body must be JSON (application/json), not {media}",
    )


async def read_body(receive: Receive, limit: int, content_length: str | None) -> bytes:
    """The whole request body; 413 when it is (or says it will be) over ``limit`` bytes.
    ``Disconnected`` when the client leaves first."""
    if content_length is not None and content_length.isdigit() and int(content_length) > limit:
        raise too_large(limit)
    message = await receive()
    if message["type"] != "http.request":
        raise Disconnected
    body: bytes = message.get("body", b"")
    if not message.get("more_body", False):
        if len(body) > limit:
            raise too_large(limit)
        return body
    chunks, size = [body], len(body)
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise Disconnected
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise too_large(limit)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def decode_json(raw: bytes | str) -> Any:
    """The JSON value of ``raw`` (``{}`` when it is empty or blank); 400 or 422 as above."""
    if not raw.strip():
        return {}
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        value = _decode_slowly(raw)
    # ``MAX_DEPTH`` openers or fewer cannot nest deeper: the walk is for the rare large body.
    text = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if text.count(b"[") + text.count(b"{") > MAX_DEPTH and _too_deep(value, MAX_DEPTH):
        raise _deep()
    return value


def _decode_slowly(raw: bytes | str) -> Any:
    """What orjson refused, by the standard library's rules (a byte-order mark is fine), with
    orjson's refusal of numbers JSON cannot hold."""
    try:
        value = json.loads(raw, parse_constant=reject_constant, parse_float=finite_float)
    except RecursionError:
        raise _deep() from None
    except UnicodeDecodeError:
        raise Rejected(400, "malformed_json", "request body is not UTF-8 text") from None
    except ValueError as e:
        msg = f"request body is not valid JSON: {limit_message(e)}"
        raise Rejected(400, "malformed_json", msg) from None
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise Rejected(
            400, "malformed_json", "request body holds invalid unicode (a lone surrogate)"
        ) from None
    except RecursionError:
        raise _deep() from None
    return value


def _deep() -> Rejected:
    return Rejected(
        422, "too_deep", f"request body nests arrays or objects deeper than {MAX_DEPTH} levels"
    )


def _too_deep(value: Any, budget: int) -> bool:
    """Whether ``value`` nests containers more than ``budget`` levels (iterative: no recursion
    limit to hit)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > budget:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False
