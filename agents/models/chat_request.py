"""The chat request as the ``openai`` package sends it, without its per-call transform.

``AsyncCompletions.create(**request)`` walks every message and tool dict against the package's
type hints before it sends them (``async_maybe_transform``): for the JSON-ready dicts the project
builds, the walk changes nothing, but it was the largest single cost of a model call. ``WireShape``
asks ``create`` once how it would send a request of a given shape, then sends every request of
that shape through the client's low-level ``post`` with the same body (keys in the order
``create`` writes them) and the same options (headers, timeout, the raw-response header of
``with_raw_response``), so the bytes on the wire are the same (``tests/agents/models/
test_request_bytes.py`` compares them).

The shape is every key of the request and the value of each except ``messages`` and ``tools``
(the values ``create`` places in the options: ``extra_headers``, ``timeout``...); asking ``create``
runs its checks too, so a request ``create`` refuses (an unknown parameter) is refused the same
way. Imports ``openai`` (a remote model's module imports it first).
"""

from __future__ import annotations

import json
from typing import Any

from openai.resources.chat import AsyncCompletions

__all__ = ["WireRequest", "WireShape"]

_BULKY = ("messages", "tools")
"""Values that vary per call and never go to the options: left out of the shape."""


class WireRequest:
    """What ``create`` hands the client's ``post``: the path, the body and the rest."""

    def __init__(self, path: str, body: dict[str, Any], kwargs: dict[str, Any]) -> None:
        self.path = path
        self.body = body
        self.kwargs = kwargs


class _Capture:
    """A stand-in client for ``AsyncCompletions``: its ``post`` keeps what it was given."""

    def __init__(self) -> None:
        self.sent: dict[str, Any] = {}

    async def post(self, path: str, **kwargs: Any) -> None:
        self.sent = {"path": path, **kwargs}

    get = patch = put = delete = get_api_list = post


_Shape = tuple[str, tuple[str, ...], dict[str, Any]]


class WireShape:
    """How ``AsyncCompletions.create`` (``with_raw_response``) sends requests, per shape."""

    def __init__(self) -> None:
        self._shapes: dict[str, _Shape | None] = {}

    async def prepare(self, request: dict[str, Any], *, timeout: float) -> WireRequest | None:
        """What ``create(**request, timeout=timeout)`` would post; None for a request whose
        body ``create`` would not send as given (then send it through ``create``)."""
        key = json.dumps(
            [[k, None if k in _BULKY else v] for k, v in request.items()], default=repr
        )
        if key not in self._shapes:
            self._shapes[key] = await self._ask_create(request, timeout)
        shape = self._shapes[key]
        if shape is None:
            return None
        path, order, kwargs = shape
        options = dict(kwargs["options"])
        return WireRequest(path, {k: request[k] for k in order}, {**kwargs, "options": options})

    async def _ask_create(self, request: dict[str, Any], timeout: float) -> _Shape | None:
        capture = _Capture()
        resource = AsyncCompletions(capture)  # type: ignore[arg-type]
        small = {k: ([] if k in _BULKY else v) for k, v in request.items()}
        await resource.with_raw_response.create(**small, timeout=timeout)
        sent = dict(capture.sent)
        body = sent.pop("body")
        path = sent.pop("path")
        same = isinstance(body, dict) and body.keys() == request.keys()
        if not same or sent.get("stream") or any(body[k] != small[k] for k in body):
            return None  # create renames, drops or changes something: let it do so
        return path, tuple(body), sent
