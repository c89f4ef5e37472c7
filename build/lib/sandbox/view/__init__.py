"""Seeing runs: the web viewer (``sandbox view``), its static export, and the leaderboard.

- ``catalog``: the runs under a folder, read from ``manifest.json`` and ``scores.json`` only;
- ``run_page``, ``episode_page``, ``side_by_side``: what the run, episode and compare pages show;
- ``leaderboard``: one row per (suite, model, agent) over existing runs (``sandbox leaderboard``);
- ``viewer``: all of it for one root folder, without HTTP; ``app``: the FastAPI app over it;
  ``export``: the same pages written as files; ``pages`` and ``static/``: the HTML shell, the
  script and the style sheet, shipped in the package (nothing is fetched from elsewhere).

Near the top of the harness: reads runs through ``sandbox.store`` and scores through
``sandbox.eval``, uses ``sandbox.replay`` to find where two episodes differ; only
``sandbox.commands`` imports it. ``app`` (FastAPI) is not imported here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.lazy import lazy_package

if TYPE_CHECKING:
    from sandbox.view.catalog import Catalog, RunEntry, RunRecord, read_record
    from sandbox.view.leaderboard import Leaderboard, LeaderboardRow, build_leaderboard

_EXPORTS: dict[str, str] = {
    "Catalog": "sandbox.view.catalog",
    "Leaderboard": "sandbox.view.leaderboard",
    "LeaderboardRow": "sandbox.view.leaderboard",
    "RunEntry": "sandbox.view.catalog",
    "RunRecord": "sandbox.view.catalog",
    "build_leaderboard": "sandbox.view.leaderboard",
    "read_record": "sandbox.view.catalog",
}

__all__ = [
    "Catalog",
    "Leaderboard",
    "LeaderboardRow",
    "RunEntry",
    "RunRecord",
    "build_leaderboard",
    "read_record",
]

lazy_package(__name__, _EXPORTS)
