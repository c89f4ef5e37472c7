"""The users of a run's conversational tasks: who plays them, and the record of their answers
(docs/conversations.md). ``UserProvider`` hands out one ``agents.user.User`` per episode;
``UserRecord`` keeps what a model-played user answered. May import ``sandbox.models``,
``sandbox.store`` and the libraries."""

from __future__ import annotations

from sandbox.users.provider import OFFLINE_USERS, UserProvider, default_user_model
from sandbox.users.record import RecordedUser, UserRecord, record_key

__all__ = [
    "OFFLINE_USERS",
    "RecordedUser",
    "UserProvider",
    "UserRecord",
    "default_user_model",
    "record_key",
]
