"""One module per ``sandbox`` subcommand. Each exposes ``register(subparsers)``, which adds its
parser and sets ``handler`` (a function taking the parsed args and returning an exit code).
Commands are the top layer: they may import any ``sandbox`` group, nothing imports them.

``COMMANDS`` is plain data on purpose: ``sandbox --help`` lists the commands from it, and
``sandbox <command>`` imports only that command's module (start-up stays well under 0.4 s).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["COMMANDS", "Command"]


class Command(NamedTuple):
    """Where a subcommand lives and the one line ``sandbox --help`` shows for it."""

    module: str
    help: str


COMMANDS: dict[str, Command] = {
    "run": Command("sandbox.commands.run", "run an agent with a model on a suite"),
    "compare": Command(
        "sandbox.commands.compare",
        "compare agents under identical tool behaviour, or existing runs",
    ),
    "eval": Command("sandbox.commands.eval", "recompute the scores and report of a run"),
    "probe": Command(
        "sandbox.commands.probe", "teacher-forced step probes of a model (T-Eval protocol)"
    ),
    "replay": Command(
        "sandbox.commands.replay", "replay a run offline and check every step is reproduced"
    ),
    "rescore": Command(
        "sandbox.commands.rescore", "recompute the scores of a run with the current evaluator"
    ),
    "import": Command(
        "sandbox.commands.importer",
        "Import ToolBench / StableToolBench / ToolEyes data as a suite.",
    ),
    "export": Command("sandbox.commands.export", "Export a run to another benchmark's format."),
    "suite": Command("sandbox.commands.suite", "a suite's recordings and its overlay"),
    "view": Command(
        "sandbox.commands.view", "browse runs, episodes and DFSDT trees in a local web app"
    ),
    "leaderboard": Command(
        "sandbox.commands.leaderboard", "rank existing runs: one row per (suite, model, agent)"
    ),
    "serve": Command(
        "sandbox.commands.serve", "serve a suite's mock tools over HTTP (REST, /virtual) and MCP"
    ),
    "launch": Command(
        "sandbox.commands.launch", "start a model alias's server by hand, for runs to share"
    ),
}
