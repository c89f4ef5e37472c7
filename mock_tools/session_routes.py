"""The HTTP routes of a world's sessions (a suite with a world; docs/worlds.md, "Serving").

    POST   /sessions                          open a session: {session?, task?, seed?}
    GET    /sessions/{session}                where it is: task, state hash, states known
    GET    /sessions/{session}/state          its state: {state, data} (every record)
    POST   /sessions/{session}/snapshot       {state}: the current state's hash, kept
    POST   /sessions/{session}/restore        {state}: go back to a state it has been in
    POST   /sessions/{session}/reset          back to its task's initial state
    POST   /sessions/{session}/user/{tool}    the user's call of its own tool (dual control)
    DELETE /sessions/{session}                forget it

A call belongs to the session its ``X-Sandbox-Session`` header names (opened at the call's
``X-Sandbox-Scenario`` task when it does not exist yet). A session name may hold ``/``; in a
path it is percent-encoded or written as is. Unknown sessions and states are 404s, a task the
suite lacks is a 404 naming it. Imports the service, its body reader (``json_body``) and
FastAPI.
"""

from __future__ import annotations

import uuid
from enum import Enum
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from mock_tools.json_body import Disconnected, check_content_type, decode_json, read_body
from mock_tools.render import native_payload, reject_payload
from mock_tools.service import MockToolService, Rejected

__all__ = ["add_session_routes"]

_ARGS_BODY: dict[str, Any] = {
    "requestBody": {
        "content": {"application/json": {"schema": {"type": "object"}}},
        "description": "The tool's arguments (none: an empty body).",
    }
}


class OpenSession(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session: str | None = Field(
        default=None, max_length=1024, description="Its name (default: a new one)."
    )
    task: str | None = Field(default=None, description="The task whose initial state it starts at.")
    seed: int = Field(
        default=0, description="The episode seed (the world's ctx.rng draws from it)."
    )


class StateRef(BaseModel):
    model_config = ConfigDict(extra="forbid")

    state: str = Field(min_length=1, max_length=128, description="A state's hash.")


def add_session_routes(app: FastAPI, service: MockToolService, *, max_body_bytes: int) -> None:
    """Add the session routes when the service's suite has a world (``max_body_bytes``: the
    largest body of the user's call, the app's limit of every call's body)."""
    worlds = service.worlds
    if worlds is None:
        return
    tags: list[str | Enum] = ["sessions"]

    def session_of(name: str) -> Any:
        found = worlds.get(name)
        if found is None:
            raise HTTPException(404, f"no session {name!r}")
        return found

    @app.post("/sessions", tags=tags, status_code=201)
    async def open_session(body: OpenSession) -> dict[str, Any]:
        """Open (or start again) a session at its task's initial state."""
        name = body.session or uuid.uuid4().hex
        try:
            made = worlds.open(name, task=body.task, seed=body.seed)
        except KeyError:
            raise HTTPException(404, f"no task {body.task!r} in this suite") from None
        return made.describe()

    @app.get("/sessions/{session:path}/state", tags=tags)
    async def session_state(session: str) -> dict[str, Any]:
        """The session's whole state (every collection and record) and its hash."""
        s = session_of(session)
        return {"state": s.state.hash, "data": s.state.to_documents()}

    @app.post("/sessions/{session:path}/snapshot", tags=tags)
    async def snapshot(session: str) -> dict[str, Any]:
        """The current state's hash: ``restore`` with it comes back here."""
        return {"state": session_of(session).state.hash}

    @app.post("/sessions/{session:path}/restore", tags=tags)
    async def restore(session: str, body: StateRef) -> dict[str, Any]:
        """Go back to a state the session has been in (a switch, not a replay)."""
        s = session_of(session)
        async with s.lock:
            try:
                s.restore(body.state)
            except KeyError:
                raise HTTPException(
                    404, f"session {session!r} was never in state {body.state!r}"
                ) from None
        return s.describe()

    @app.post("/sessions/{session:path}/reset", tags=tags)
    async def reset_session(session: str) -> dict[str, Any]:
        """Back to the task's initial state (the states it was in stay known)."""
        s = session_of(session)
        async with s.lock:
            s.restore(s.initial.hash)
        return s.describe()

    @app.post("/sessions/{session:path}/user/{tool}", tags=tags, openapi_extra=_ARGS_BODY)
    async def user_call(session: str, tool: str, request: Request) -> Response:
        """A call of the user's own tool (``@write(user=True)``, τ²'s dual control) in the
        session, answered as an agent's call of the world is (``ok``, ``body``, ``error``,
        ``state``, ``changes``): what a conversation's user does on its side of the world.
        Its body (the arguments) is read as the call routes read theirs
        (``mock_tools.json_body``: 413, 415, 400, 422 ``too_deep`` or ``not_an_object``)."""
        headers = request.headers
        try:
            check_content_type(headers.get("content-type"))
            receive: Any = request.receive  # ASGI's receive, typed by Starlette as a mapping
            raw = await read_body(receive, max_body_bytes, headers.get("content-length"))
            args = decode_json(raw)
            if not isinstance(args, dict):
                raise Rejected(422, "not_an_object", "arguments must be a JSON object")
            o = await service.user_call(session, tool, args)
        except Disconnected:
            return Response(status_code=400)  # the client left: nobody reads the answer
        except Rejected as e:
            return JSONResponse(reject_payload(e, False), status_code=e.status)
        return JSONResponse(native_payload(o), status_code=o.status)

    @app.get("/sessions/{session:path}", tags=tags)
    async def describe(session: str) -> dict[str, Any]:
        """Where the session is: its task, state hash, initial state, states known, calls."""
        return session_of(session).describe()

    @app.delete("/sessions/{session:path}", tags=tags)
    async def forget(session: str) -> dict[str, int]:
        """Forget the session and its states."""
        session_of(session)
        return {"dropped": worlds.drop(session)}
