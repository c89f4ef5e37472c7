"""Installing freshly made runs as the committed regression fixtures, only where behaviour changed.

``make replays`` makes the fixture runs again into a scratch folder, then calls
``python -m sandbox.replay.fixtures SCRATCH replays``. A fresh run replaces the committed one
only when it differs in substance: another suite fingerprint or config (which names the agent
and model with their options; manifests of older versions are read through their upgrade), another
set of episodes, or an episode that differs at some step (``compare_trajectories``: timings,
token counts and ids do not count). Otherwise the committed files stay byte for byte as they
are, so regenerating does not dirty the checkout. ``--force`` replaces them all.
May import ``sandbox.store`` and ``sandbox.replay``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from sandbox.errors import SandboxError
from sandbox.replay.replay import compare_trajectories
from sandbox.store import MANIFEST, RunStore, read_trajectories

__all__ = ["fixture_difference", "install_fixtures", "main"]

REPORT = "report.md"


def fixture_difference(committed: Path, fresh: Path) -> str | None:
    """Why ``fresh`` differs in substance from ``committed`` (None: it does not)."""
    if not (committed / MANIFEST).is_file():
        return "new fixture"
    old, new = RunStore.open(committed).manifest, RunStore.open(fresh).manifest
    if old.suite.fingerprint != new.suite.fingerprint:
        return "the suite changed"
    if old.config.model_copy(update={"out": ""}) != new.config.model_copy(update={"out": ""}):
        return "the config changed"
    want = {(t.scenario_id, t.trial): t for t in read_trajectories(committed)}
    got = {(t.scenario_id, t.trial): t for t in read_trajectories(fresh)}
    if set(want) != set(got):
        return f"other episodes ({len(want)} committed, {len(got)} now)"
    for key, expected in want.items():
        diff = compare_trajectories(expected, got[key]).first_diff
        if diff is not None:
            return f"{key[0]} #{key[1]} differs at {diff.describe()}"
    return None


def _install(fresh: Path, dest: Path) -> None:
    """Move ``fresh`` to ``dest``; its manifest and report name ``dest``'s folder."""
    store = RunStore.open(fresh)
    store.manifest.config = store.manifest.config.model_copy(update={"out": str(dest.parent)})
    store.write_manifest()
    report = fresh / REPORT
    if report.is_file():
        report.write_text(
            report.read_text(encoding="utf-8").replace(str(fresh), str(dest)), encoding="utf-8"
        )
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(fresh, dest)


def install_fixtures(fresh_dir: Path, fixtures_dir: Path, *, force: bool = False) -> list[str]:
    """Install every run of ``fresh_dir`` into ``fixtures_dir`` where it differs; one line each."""
    runs = sorted(p for p in fresh_dir.iterdir() if (p / MANIFEST).is_file())
    if not runs:
        raise SandboxError(f"no runs in {fresh_dir} to install as fixtures")
    lines = []
    for fresh in runs:
        dest = fixtures_dir / fresh.name
        why = "--force" if force else fixture_difference(dest, fresh)
        if why is None:
            lines.append(f"{dest}: unchanged (every episode identical), left as it is")
            continue
        _install(fresh, dest)
        lines.append(f"{dest}: updated ({why})")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sandbox.replay.fixtures", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("fresh", type=Path, help="folder holding the runs just made")
    parser.add_argument("fixtures", type=Path, help="folder of the committed fixtures")
    parser.add_argument("--force", action="store_true", help="replace even identical fixtures")
    args = parser.parse_args(argv)
    try:
        for line in install_fixtures(args.fresh, args.fixtures, force=args.force):
            print(line)
    except SandboxError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
