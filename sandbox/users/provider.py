"""``UserProvider``: the user of each conversational episode of a run.

Who plays it: ``user.model`` (``--user-model``) when the task has a persona, else the task's
script (``scripted-user``); with no ``user.model``, a persona task is played by ``persona-user``
(offline). A user model is any model alias (``sandbox.models``: launched endpoints, retries and
``--model-cache`` apply as to the agent's model), asked through ``agents.users.ModelUser`` with
the persona's prompt. A model-played user (any kind but the two offline ones) answers through
its record (``sandbox.users.record``). May import ``sandbox.models``, ``sandbox.store`` and the
libraries.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from agents.user import User
from agents.users.model_user import ModelUser, persona_prompt
from mock_tools.models import Task
from mock_tools.suite import Suite
from sandbox.models import ModelProvider, ModelSettings, build_models, resolve_model
from sandbox.store.config import RunConfig
from sandbox.users.record import RECORD_FILE, RecordedUser, UserRecord

__all__ = ["OFFLINE_USERS", "UserProvider", "default_user_model"]

OFFLINE_USERS = frozenset({"scripted-user", "persona-user"})


def default_user_model(task: Task, configured: str | None) -> str:
    """The user model that plays ``task`` (see the module docstring)."""
    user = task.user
    assert user is not None
    if user.persona is None:
        return "scripted-user"
    return configured or "persona-user"


class UserProvider:
    """One user per conversational episode; models built once per name, closed with the run."""

    def __init__(
        self, config: RunConfig, suite: Suite, env: Mapping[str, str] | None = None
    ) -> None:
        self.config = config
        self.env = dict(env or {})
        base = (
            Path(suite.path) if suite.path is not None and Path(suite.path).is_dir() else Path(".")
        )
        self.record = UserRecord(config.user.record or base / RECORD_FILE)
        self._providers: dict[str, ModelProvider] = {}

    def names(self, tasks: list[Task]) -> list[str]:
        """The user models the run's conversational tasks need."""
        return sorted({default_user_model(t, self.config.user.model) for t in tasks if t.user})

    def _provider(self, name: str) -> ModelProvider:
        found = self._providers.get(name)
        if found is None:
            spec = resolve_model(name, env=self.env)
            found = self._providers[name] = build_models(
                spec, ModelSettings.of(self.config.model, self.env)
            )
        return found

    async def probe(self, tasks: list[Task]) -> None:
        """Build and check every user model the tasks need, before the first episode. Under
        ``--user-miss error`` or ``scripted`` a model-played user is never asked (its record
        answers, else the episode is a user miss or the script answers), so its endpoint is
        not checked: ``sandbox replay`` and a run from a record need none."""
        for name in self.names(tasks):
            if name in OFFLINE_USERS or self.config.user.miss == "live":
                await self._provider(name).probe()

    def for_episode(self, task: Task, *, seed: int, trial: int) -> User | None:
        """The user of episode ``(task, trial)``; None for a task without one."""
        spec = task.user
        if spec is None:
            return None
        name = default_user_model(task, self.config.user.model)
        model = self._provider(name).for_episode(task, seed=seed, trial=trial)
        persona = spec.persona
        prompt = (
            persona_prompt(persona.scenario, persona.known, persona.unknown, persona.instructions)
            if persona is not None
            else ""
        )
        reveals = [list(t.reveal) for t in spec.script or []]
        source = {"scripted-user": "script", "persona-user": "persona"}.get(name, "live")
        user = ModelUser(
            model,
            prompt,
            unknown=list(persona.unknown) if persona is not None else [],
            hidden=list(spec.hidden),
            reveals=reveals,
            name=name,
            source=source,  # type: ignore[arg-type]
        )
        if name in OFFLINE_USERS:
            return user
        scripted = None
        if spec.script is not None:
            scripted = ModelUser(
                self._provider("scripted-user").for_episode(task, seed=seed, trial=trial),
                "",
                hidden=list(spec.hidden),
                reveals=reveals,
                name="scripted-user",
                source="script",
            )
        return RecordedUser(user, self.record, task, miss=self.config.user.miss, scripted=scripted)

    async def aclose(self) -> None:
        for provider in self._providers.values():
            await provider.aclose()
