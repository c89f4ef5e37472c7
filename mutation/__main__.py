"""``python -m mutation``: the mutation score of the core modules (``make mutate``).

    python -m mutation                        every group; fails below the goal
    python -m mutation agents eval.pass_rate  groups or modules (``agents.dfsdt`` or ``dfsdt``)
    python -m mutation --changed --hand       what CI runs: the core functions the change
                                              touched, and the hand-written mutants

Work folders live under ``.cache/mutation/`` (one per group, see ``mutation.workdir``).
Exit status: 0 at or above the goal, 1 below it (or a hand-written mutant not killed), 2 usage.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from mutation.changed import change_base, importing_tests, touched_functions
from mutation.hand import check_hand_mutants
from mutation.modules import GROUPS, Group
from mutation.report import console_report, stale_equivalents, write_saved, write_summary
from mutation.results import GOAL, ModuleScore, mutant_names, read_module, retest_survivors
from mutation.runner import MutmutFailed, run_mutmut
from mutation.workdir import prepare

ROOT = Path(__file__).resolve().parents[1]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m mutation", description=__doc__.split("\n")[0])
    p.add_argument("targets", nargs="*", help="groups or modules (default: all)")
    p.add_argument("--changed", action="store_true", help="only the functions a change touched")
    p.add_argument("--base", help="the commit the change is measured from (with --changed)")
    p.add_argument("--hand", action="store_true", help="also check the hand-written mutants")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="mutants at once")
    p.add_argument(
        "--max-seconds",
        type=float,
        help="stop mutating this long after the start (hand-written "
        "mutants are checked in full; mutants not reached by then count as not checked)",
    )
    p.add_argument(
        "--reuse",
        action="store_true",
        help="keep earlier results of unchanged code (survivors are tested again: tests may "
        "have been added)",
    )
    p.add_argument("--no-mypy", action="store_true", help="do not let mypy catch mutants")
    p.add_argument(
        "--summary", type=Path, help="write the rows of the modules measured in full here"
    )
    p.add_argument("--json", type=Path, help="write the scores and every survivor here")
    p.add_argument("--work", type=Path, default=ROOT / ".cache" / "mutation")
    p.add_argument(
        "--from-json",
        type=Path,
        nargs="+",
        metavar="FILE",
        help="run nothing: write the rows saved by --json runs (of this same code, made in "
        "another checkout) into --summary",
    )
    return p


def _from_saved(files: list[Path], summary: Path | None) -> int:
    """``--from-json``: the saved scores' rows into ``summary``; 1 when one is below the goal."""
    if summary is None:
        print("--from-json writes into --summary FILE: give it", file=sys.stderr)
        return 2
    try:
        saved = [m for f in files for m in json.loads(f.read_text("utf-8"))]
        written = write_saved(summary, saved)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"cannot write the saved scores: {e}", file=sys.stderr)
        return 2
    print(f"{summary}: the rows of {', '.join(written) or 'no module'} written")
    below = [m["module"] for m in saved if m["score"] is not None and m["score"] < GOAL]
    for module in below:
        print(f"below the goal: {module}")
    return 1 if below else 0


def _selected(targets: list[str]) -> list[Group]:
    """The groups to run, each narrowed to the modules named (all of them without names)."""
    if not targets:
        return list(GROUPS)
    chosen: dict[str, list[str]] = {}
    for target in targets:
        for m in _modules_named(target):
            g = next(g for g in GROUPS if m in g.modules)
            chosen.setdefault(g.name, [])
            if m not in chosen[g.name]:
                chosen[g.name].append(m)
    return [replace(g, modules=tuple(chosen[g.name])) for g in GROUPS if g.name in chosen]


def _modules_named(target: str) -> list[str]:
    """A group's modules (by its name), or the one module whose dotted name is ``target`` or ends
    with it (``store`` is the group; ``mock_tools.store`` the module; ``selection`` names two
    modules, so it is refused with both names)."""
    group = next((g for g in GROUPS if g.name == target), None)
    if group is not None:
        return list(group.modules)
    modules = [m for g in GROUPS for m in g.modules]
    if target in modules:
        return [target]
    found = [m for m in modules if m.endswith("." + target)]
    if len(found) > 1:
        raise SystemExit(
            f"python -m mutation: {target!r} names {', '.join(found)}: give one of them"
        )
    if not found:
        known = ", ".join(g.name for g in GROUPS)
        raise SystemExit(f"python -m mutation: {target!r} is no core group or module ({known})")
    return found


def _changed_group(groups: list[Group], base: str | None) -> tuple[Group, dict[str, list[str]]]:
    """One group of the modules the change touched, and the name patterns of the touched
    functions per module. Its tests are those of their groups' selections that import a touched
    module themselves (all of the selections when none does): mutmut's first pass runs the
    whole selection once, which for a large group would take CI's whole budget."""
    if base is None:  # a shallow clone: no history to measure a change against
        print("no base commit to measure the change from (a shallow clone?): nothing to mutate")
        return Group("changed", (), ()), {}
    touched = touched_functions(ROOT, base)
    modules = [m for g in groups for m in g.modules if m in touched]
    owners = [g for g in groups if any(m in g.modules for m in modules)]
    tests = tuple(dict.fromkeys(t for g in owners for t in g.tests))
    deselect = tuple(dict.fromkeys(d for g in owners for d in g.deselect))
    direct = importing_tests(ROOT, tests, deselect, modules)
    changed = Group("changed", tuple(modules), direct or tests, () if direct else deselect)
    return changed, {m: touched[m] for m in modules}


def _run_group(
    args: argparse.Namespace,
    group: Group,
    names: dict[str, list[str]],
    deadline: float | None,
) -> list[ModuleScore]:
    folder = prepare(ROOT, args.work, group, type_check=not args.no_mypy, fresh=not args.reuse)
    if args.reuse:
        for module in group.modules:
            retest_survivors(folder, module)
    patterns: list[str] = []
    if args.changed:
        for module in group.modules:
            made = mutant_names(folder, module)
            names[module] = [p for p in names[module] if fnmatch.filter(made, p)]
            patterns += names[module]
        if not patterns:
            return []
    if not args.changed and not any(mutant_names(folder, m) for m in group.modules):
        # only code mutmut leaves alone (a pydantic class body, constants): nothing to run
        print(f"{', '.join(group.modules)}: no mutants (nothing mutmut mutates)", flush=True)
        return [ModuleScore(m) for m in group.modules]
    left = None if deadline is None else max(1.0, deadline - time.monotonic())
    print(f"mutating {', '.join(group.modules)} ...", flush=True)
    run_mutmut(folder, jobs=args.jobs, names=patterns, max_seconds=left)
    modules = [m for m in group.modules if names.get(m) or not args.changed]
    return [read_module(folder, m, names=names.get(m, ())) for m in modules]


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.from_json:
        return _from_saved(args.from_json, args.summary)
    deadline = None if args.max_seconds is None else time.monotonic() + args.max_seconds
    groups = _selected(args.targets)
    names: dict[str, list[str]] = {}
    if args.changed:
        changed, names = _changed_group(groups, change_base(ROOT, args.base))
        groups = [changed] if changed.modules else []
    scores: list[ModuleScore] = []
    # the hand-written mutants are checked in full whatever the deadline, on a second core
    # beside mutmut's single-process first phases (mypy, tracing the tests)
    with ThreadPoolExecutor(max_workers=1) as pool:
        hand_check = pool.submit(check_hand_mutants, ROOT, args.work) if args.hand else None
        try:
            for group in groups:
                scores += _run_group(args, group, names, deadline)
        except MutmutFailed as e:
            print(e, file=sys.stderr)
            return 1
        hand = hand_check.result() if hand_check else []
    print(console_report(scores, hand))
    for stale in stale_equivalents(scores):
        print(f"stale equivalent entry (remove it): {stale.module} {stale.function}")
    if args.json:
        args.json.write_text(json.dumps([m.to_json() for m in scores], indent=1), "utf-8")
    if args.summary and args.changed:
        print(f"{args.summary} not written: it holds the scores of whole modules")
    elif args.summary:
        written = write_summary(args.summary, scores)
        print(f"{args.summary}: the rows of {', '.join(written) or 'no module'} written")
    if args.changed and not scores:
        print("no core function changed: nothing to mutate")
    failed = [m.module for m in scores if not m.meets_goal]
    failed += [r.mutant.file for r in hand if r.outcome != "killed"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
