"""One module per ``sandbox`` subcommand. Each exposes ``register(subparsers)``, which adds its
parser and sets ``handler`` (a function taking the parsed args and returning an exit code).
Commands are the top layer: they may import any ``sandbox`` group, nothing imports them.
"""

COMMANDS: dict[str, str] = {
    "run": "sandbox.commands.run",
    "compare": "sandbox.commands.compare",
    "eval": "sandbox.commands.eval",
    "probe": "sandbox.commands.probe",
    "replay": "sandbox.commands.replay",
    "rescore": "sandbox.commands.rescore",
    "import": "sandbox.commands.importer",
    "export": "sandbox.commands.export",
    "suite": "sandbox.commands.suite",
    "view": "sandbox.commands.view",
    "leaderboard": "sandbox.commands.leaderboard",
    "serve": "sandbox.commands.serve",
}
