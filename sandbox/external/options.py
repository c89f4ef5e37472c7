"""The options of the ``external`` strategy: how the agent is reached and how long it may take.

Apart from the strategy (``sandbox.external.strategy``) so that the episode's modules read them
without importing the strategy that imports them. May import ``agents.options`` only.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from agents.options import AgentOptions

__all__ = ["DEFAULT_GRACE", "DEFAULT_STDERR_CHARS", "DEFAULT_TIMEOUT", "ExternalOptions"]

DEFAULT_TIMEOUT = 600.0
DEFAULT_GRACE = 5.0
DEFAULT_STDERR_CHARS = 4000


class ExternalOptions(AgentOptions):
    """How the external agent is reached, and how long it may take."""

    command: str | None = Field(
        default=None,
        description="The command line started (through /bin/sh, in its own "
        "process group) once per episode, the task on stdin.",
    )
    url: str | None = Field(
        default=None,
        description="The URL of an agent served over HTTP, POSTed the task "
        "once per episode (instead of a command).",
    )
    cwd: str | None = Field(default=None, description="The working directory of the command.")
    timeout: float = Field(
        default=DEFAULT_TIMEOUT,
        gt=0,
        description="Seconds an episode's agent may run when the budget sets "
        "no --max-seconds (past it, the episode ends agent_timeout).",
    )
    grace: float = Field(
        default=DEFAULT_GRACE,
        ge=0,
        description="Seconds the agent has to exit once its episode ended "
        "(Finish, a budget) before SIGTERM, and again before SIGKILL.",
    )
    stderr_chars: int = Field(
        default=DEFAULT_STDERR_CHARS,
        ge=0,
        description="Characters of the end of the agent's stderr kept in the trajectory.",
    )

    bind_process: bool = Field(
        default=True,
        description="Answer an episode's URLs only to connections from the command's own "
        "processes (its session and their descendants, read from /proc; Linux), so that no "
        "other episode's agent can act in it; turn off for an agent whose processes are not "
        "the command's descendants (a container started through a daemon).",
    )

    @model_validator(mode="after")
    def _command_or_url(self) -> ExternalOptions:
        if bool(self.command and self.command.strip()) == bool(self.url and self.url.strip()):
            raise ValueError(
                'give the agent\'s command (-O command="python my_agent.py") or its URL '
                "(-O url=http://127.0.0.1:9000/episode), one of the two"
            )
        return self
