"""The users of conversations the agents library ships: a user played by any ``Model``
(``ModelUser``), and two offline user models: the persona player and the scripted player
(``agents.user`` has the protocol)."""

from __future__ import annotations

from agents.users.model_user import END_CONVERSATION, ModelUser, persona_prompt
from agents.users.persona import PersonaUserModel, ScriptedUserModel

__all__ = [
    "END_CONVERSATION",
    "ModelUser",
    "PersonaUserModel",
    "ScriptedUserModel",
    "persona_prompt",
]
