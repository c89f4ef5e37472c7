"""The offline user kinds: ``scripted-user`` (a task's script) and ``persona-user`` (the
deterministic persona player, the CI default of persona tasks).

Each is a model kind like the agents' offline ones: its provider hands out one ``Model`` per
episode, built from the task's ``user`` (``agents.users.persona``), which a ``ModelUser`` asks
as it would any user model. An agent run with one of them as its ``--model`` is refused: they
play users. May import ``sandbox.models.provider`` and ``sandbox.errors`` only.
"""

from __future__ import annotations

from agents.model import Model
from agents.users.persona import PersonaUserModel, ScriptedUserModel
from mock_tools.models import Task
from sandbox.errors import ConfigError
from sandbox.models.provider import ModelSettings, ModelSpec, OfflineModels

__all__ = ["PersonaUsers", "ScriptedUsers", "build_persona_user", "build_scripted_user"]


class ScriptedUsers(OfflineModels):
    def for_episode(self, task: Task, *, seed: int, trial: int) -> Model:
        user = task.user
        if user is None or user.script is None:
            raise ConfigError(f"task {task.id!r} has no user script for {self.spec.name}")
        return ScriptedUserModel([t.say for t in user.script], name=self.spec.name)


class PersonaUsers(OfflineModels):
    def for_episode(self, task: Task, *, seed: int, trial: int) -> Model:
        user = task.user
        if user is None or user.persona is None:
            raise ConfigError(f"task {task.id!r} has no user persona for {self.spec.name}")
        p = user.persona
        return PersonaUserModel(
            known=dict(p.known),
            accept=[a.model_dump() for a in p.accept],
            refuse=[r.model_dump() for r in p.refuse],
            act=[a.model_dump() for a in p.act],
            name=self.spec.name,
        )


def build_scripted_user(spec: ModelSpec, settings: ModelSettings) -> ScriptedUsers:
    return ScriptedUsers(spec)


def build_persona_user(spec: ModelSpec, settings: ModelSettings) -> PersonaUsers:
    return PersonaUsers(spec)
