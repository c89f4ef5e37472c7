"""User-facing errors of the harness. The CLI prints them without a traceback.

SandboxError            a fixable mistake; the message says what to do (exit 1)
├── ConfigError         bad flags, unknown names (exit 2)
│   └── PluginFailure   a plugin raised or broke its contract where nothing can go on (exit 2)
├── ModelUnreachableError  the model endpoint does not answer (exit 2)
├── EndpointConfigError    the endpoint refuses the run's set-up: a key, a model name (exit 2)
├── RunError            a run folder is missing, corrupt or incompatible (exit 1)
├── DivergenceError     a replay did not reproduce its run (exit 1)
└── RunInterrupted      a signal stopped a run; it is resumable (exit 128 + signal)
Imports nothing.
"""

from __future__ import annotations


class SandboxError(Exception):
    exit_code = 1


class ConfigError(SandboxError):
    exit_code = 2


class PluginFailure(ConfigError):
    """Code of the user's own (a protocol, a step metric, an executor, a transport...) raised or
    returned what its contract forbids where nothing can go on: one line naming it and the rule
    (``agents.plugin_calls``), nothing written."""


class ModelUnreachableError(SandboxError):
    exit_code = 2


class EndpointConfigError(SandboxError):
    """The model endpoint refused the configuration (401, 403, an unknown model): every request
    would fail alike, so the run stops at the first one; fix it and ``--resume``."""

    exit_code = 2


class RunError(SandboxError):
    exit_code = 1


class DivergenceError(SandboxError):
    exit_code = 1


class RunInterrupted(SandboxError):
    """A signal (SIGTERM) stopped the run; the finished episodes are kept."""

    def __init__(self, signum: int) -> None:
        super().__init__(
            f"stopped by signal {signum}; the finished episodes are kept (--resume continues)"
        )
        self.exit_code = 128 + signum
