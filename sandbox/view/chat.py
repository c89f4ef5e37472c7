"""A conversation's episode as its page shows it: a chat along the path the episode ended on.

An episode is a conversation when it has a ``user`` node (docs/conversations.md). Its chat is
the path from the first node to the episode's end (the chosen path's last node, or the last node
when there is no chosen path), and the user's answer below that end, if any. In order:

- ``user``: the opening message (the task's query, ``source`` ``task``), then each user node: its
  text, ``source`` (``script``, ``persona``, ``live``, ``record``, ``cache``, ``replay``: where
  the answer came from; a turn that names none is the script's, the default), its ``signal``
  (the user ended the conversation), the functions it ``reveal``s, and its ``failure``;
- ``calls``: a node of the path that called functions (its thought, and the node: the page shows
  each call, its observation and, in a world, the records it changed); a user node's own calls
  (dual control) come before its text;
- ``agent``: what the agent said to the user (a text turn, a ``Finish``'s answer);
- ``note``: a give-up, an unusable turn or a failed model call on the path.

A search's abandoned branches are not in the chat (the tree shows them). May import ``agents``
records only.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from agents.trajectory import Node, Trajectory

__all__ = ["ChatEntry", "chat"]

DEFAULT_SOURCE = "script"
"""A user turn that names no source: the scripted player's (``UserTurn``'s default)."""


class ChatEntry(BaseModel):
    role: Literal["user", "agent", "calls", "note"]
    node: int | None = Field(default=None, description="The node it shows (None: the query).")
    text: str = ""
    source: str | None = Field(default=None, description="A user turn: where it came from.")
    signal: str | None = None
    reveal: list[str] = Field(default_factory=list)
    failure: str | None = None


def _end(traj: Trajectory) -> Node | None:
    if traj.chosen_path:
        return traj.node(traj.chosen_path[-1])
    return traj.nodes[-1] if traj.nodes else None


def _path(traj: Trajectory) -> list[Node]:
    end = _end(traj)
    if end is None:
        return []
    path = traj.path_to(end.id)
    if end.kind != "user":
        answer = [n for n in traj.children(end.id) if n.kind == "user"]
        path += answer[:1]
    return path


def _user(node: Node) -> ChatEntry:
    told = node.user or {}
    return ChatEntry(
        role="user",
        node=node.id,
        text=node.content or "",
        source=str(told.get("source", DEFAULT_SOURCE)),
        signal=told.get("signal"),
        reveal=list(told.get("reveal") or []),
        failure=told.get("failure"),
    )


def _said(node: Node) -> list[ChatEntry]:
    out = []
    if node.calls:
        thought = node.content if node.kind != "thought" else None
        out.append(ChatEntry(role="calls", node=node.id, text=thought or ""))
    reply = node.reply
    if reply is not None:
        out.append(ChatEntry(role="agent", node=node.id, text=reply))
    elif node.kind == "give_up":
        reason = node.finish.final_answer if node.finish is not None else ""
        out.append(ChatEntry(role="note", node=node.id, text=f"gave up {reason}".strip()))
    elif node.kind in ("invalid", "error"):
        why = node.format_error or node.error or node.kind
        out.append(ChatEntry(role="note", node=node.id, text=f"{node.kind}: {why}"))
    return out


def _opening(traj: Trajectory) -> str:
    """The user's first message as the episode's prompt holds it (its last user message)."""
    said = [m.get("content") or "" for m in traj.prompt if m.get("role") == "user"]
    return str(said[-1]) if said else ""


def chat(traj: Trajectory, query: str | None = None) -> list[ChatEntry] | None:
    """The chat of a conversation's episode (see the module docstring): ``query`` is the task's,
    else the prompt's; None for an episode without a user."""
    if not any(n.kind == "user" for n in traj.nodes):
        return None
    opening = query if query is not None else _opening(traj)
    entries = [ChatEntry(role="user", text=opening, source="task")]
    for node in _path(traj):
        if node.kind != "user":
            entries += _said(node)
            continue
        if node.calls:  # dual control: the user's calls of its own tools, made before it answered
            entries.append(ChatEntry(role="calls", node=node.id))
        entries.append(_user(node))
    return entries
