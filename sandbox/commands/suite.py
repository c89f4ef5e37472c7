"""``sandbox suite``: a suite's recordings and overlay.

sandbox suite stats SUITE [--overlay PATH] [--json]   recordings, overlay entries, APIs unrecorded
sandbox suite freeze SUITE [--overlay PATH]           overlay -> a recordings file of the suite
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from mock_tools import MockToolsError, RecordingStore, SuiteError, load_suite
from mock_tools.overlay import OVERLAY_FILE, OverlayStore, check_recordings_name, freeze
from sandbox.commands import COMMANDS
from sandbox.errors import ConfigError

__all__ = ["register", "suite_stats"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("suite", help=COMMANDS["suite"].help)
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    p = actions.add_parser("stats", help="recordings, overlay entries, APIs with no recording")
    p.add_argument("suite", metavar="SUITE")
    p.add_argument("--overlay", default=None, help=f"overlay file (default: SUITE/{OVERLAY_FILE})")
    p.add_argument("--json", action="store_true", help="print the numbers as one JSON object")
    p.set_defaults(handler=_stats)
    p = actions.add_parser(
        "freeze",
        help="write the overlay's responses into the suite's recordings (provenance kept)",
    )
    p.add_argument("suite", metavar="SUITE")
    p.add_argument("--overlay", default=None, help=f"overlay file (default: SUITE/{OVERLAY_FILE})")
    p.add_argument(
        "--name",
        default=None,
        help="file name in SUITE/recordings/, ending in .jsonl (default: frozen-<time>.jsonl)",
    )
    p.set_defaults(handler=_freeze)


def _overlay_path(args: argparse.Namespace) -> Path:
    """``--overlay``, which must be a file when given, else the suite's (which may not be yet)."""
    if args.overlay is None:
        return Path(args.suite) / OVERLAY_FILE
    if not Path(args.overlay).is_file():
        raise ConfigError(f"--overlay {args.overlay}: no such file")
    return Path(args.overlay)


def _open_overlay(path: Path) -> OverlayStore:
    """The overlay file ``--overlay`` names; ``ConfigError`` when it is no overlay."""
    try:
        return OverlayStore(path)
    except MockToolsError as e:
        raise ConfigError(str(e)) from e


def suite_stats(suite_dir: str | Path, overlay_path: Path | None) -> dict[str, Any]:
    """Counts of a suite: its APIs and recordings, its overlay, the APIs nothing answers yet."""
    try:
        suite = load_suite(suite_dir)
    except SuiteError as e:
        raise ConfigError(f"cannot load suite: {e}") from e
    store = RecordingStore.from_suite(suite)
    recorded = {(r.tool, r.api) for r in suite.recordings}
    overlay_entries = 0
    if overlay_path is not None and overlay_path.is_file():
        overlay = _open_overlay(overlay_path)
        try:
            overlay_entries = len(overlay)
            recorded |= {(r.tool, r.api) for r in overlay.recordings()}
        finally:
            overlay.close()
    missing = sorted(f"{t}/{a}" for t, a in suite.apis if (t, a) not in recorded)
    return {
        "suite": suite.name,
        "fingerprint": suite.fingerprint,
        "tools": len(suite.tools),
        "apis": len(suite.apis),
        "tasks": len(suite.tasks),
        "recordings": len(store),
        "overlay": str(overlay_path) if overlay_path is not None else None,
        "overlay_entries": overlay_entries,
        "apis_without_response": len(missing),
        "apis_without_response_sample": missing[:10],
    }


def _stats(args: argparse.Namespace) -> int:
    stats = suite_stats(args.suite, _overlay_path(args))
    if args.json:
        print(json.dumps(stats))
        return 0
    print(
        f"{stats['suite']}: {stats['apis']} APIs of {stats['tools']} tools, {stats['tasks']} "
        f"tasks, {stats['recordings']} recordings, {stats['overlay_entries']} overlay entries "
        f"({stats['overlay']}); {stats['apis_without_response']} APIs have no response yet"
    )
    for name in stats["apis_without_response_sample"]:
        print(f"  - {name}")
    return 0


def _freeze(args: argparse.Namespace) -> int:
    if args.name is not None:
        try:
            check_recordings_name(args.name)
        except MockToolsError as e:
            raise ConfigError(f"--name: {e}") from None
    path = _overlay_path(args)
    if not path.is_file():
        raise ConfigError(f"no overlay at {path}: nothing to freeze")
    overlay = _open_overlay(path)
    try:
        summary = freeze(args.suite, overlay, name=args.name)
    except (MockToolsError, SuiteError) as e:
        raise ConfigError(str(e)) from e
    finally:
        overlay.close()
    print(json.dumps(summary, indent=2))
    return 0
