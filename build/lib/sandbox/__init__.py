"""sandbox: the harness that wires ``mock_tools`` to ``agents``, runs, stores, replays and scores.

Its groups, lowest first (``tests/test_architecture.py`` holds the table): ``errors``; ``store``
(config, manifest, run folder); ``models``, ``tool_envs`` and ``interop``; ``eval``; ``run``;
``replay`` and ``compare``; ``commands`` and ``cli`` on top. A group imports only the groups
below it. docs/architecture.md has the picture and the recipes for extending it.
"""
