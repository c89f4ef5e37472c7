"""``sandbox import``: bring ToolBench, StableToolBench and ToolEyes data in as suites.

Each subcommand prints a JSON summary (what was read, skipped and written) and exits 0, or exits
1 with a message when the input cannot be used at all (for answers: when no file of it holds an
episode; the message names each file and why). ``toolbench-answers`` also writes one run folder
per method and prints their paths on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sandbox.commands import COMMANDS
from sandbox.commands.out_folder import out_folder
from sandbox.errors import ConfigError
from sandbox.interop.bfcl_import import import_bfcl
from sandbox.interop.stb_cache import import_stb_cache
from sandbox.interop.summary import ImportSummary
from sandbox.interop.toolbench_answers import import_answers
from sandbox.interop.toolbench_queries import import_queries
from sandbox.interop.tooleyes import import_tooleyes


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("import", help=COMMANDS["import"].help)
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND")

    p = kinds.add_parser("toolbench-queries", help="Query files (api_list, relevant APIs).")
    p.add_argument("files", nargs="+", type=Path, metavar="FILE")
    _common(p)
    p.set_defaults(handler=_queries)

    p = kinds.add_parser(
        "toolbench-answers",
        help="Answer files or folders: DFS trees, CoT chains, converted answers (mixed).",
    )
    p.add_argument("inputs", nargs="+", type=Path, metavar="DIR_OR_FILE")
    _common(p)
    p.add_argument(
        "--run-out",
        type=Path,
        default=None,
        metavar="DIR",
        help="Folder that receives one run folder per method, e.g. DIR/DFS_woFilter_w2 and "
        "DIR/CoT@1 (default: SUITE_DIR/original-runs).",
    )
    p.add_argument(
        "--queries",
        type=Path,
        nargs="+",
        default=None,
        metavar="FILE",
        help="the query files the answers answer: the tools' categories come from them "
        "(answer files do not name them)",
    )
    p.set_defaults(handler=_answers)

    p = kinds.add_parser("stb-cache", help="A StableToolBench response cache folder.")
    p.add_argument("cache", type=Path, metavar="CACHE_DIR")
    _common(p, fresh=False)
    p.add_argument(
        "--keep-errors",
        action="store_true",
        help="also keep the responses StableToolBench treats as misses (rate limits, "
        "authorisation and parameter errors, empty answers)",
    )
    p.set_defaults(handler=_cache)

    p = kinds.add_parser("tooleyes", help="ToolEyes' data folder (Tool_Library, Test_Data).")
    p.add_argument(
        "root",
        type=Path,
        metavar="DIR",
        help="ToolEyes' folder holding Tool_Library and Test_Data (or its Tool_Library)",
    )
    _common(p)
    p.set_defaults(handler=_tooleyes)

    p = kinds.add_parser(
        "bfcl",
        help="BFCL's multi-turn entries (the bfcl-eval wheel, an unpacked or installed copy); "
        "the suite loads BFCL's API classes from that copy at run time.",
    )
    p.add_argument(
        "source",
        type=Path,
        metavar="SOURCE",
        help="the bfcl-eval wheel (pip download --no-deps bfcl-eval==VERSION), an unpacked "
        "copy or an installed one (the folder holding bfcl_eval/)",
    )
    p.add_argument(
        "--categories",
        default=",".join(BFCL_CATEGORIES),
        metavar="LIST",
        help=f"comma-separated multi-turn categories (default: all: {','.join(BFCL_CATEGORIES)})",
    )
    p.add_argument(
        "--limit", type=int, default=None, metavar="N", help="only each category's first N entries"
    )
    p.add_argument(
        "--ids", default=None, metavar="LIST", help="only these entry ids (comma-separated)"
    )
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="SUITE_DIR",
        help="Suite folder to write (must not exist or be empty).",
    )
    p.set_defaults(handler=_bfcl)

    p = kinds.add_parser(
        "tau2",
        help="A τ²-bench checkout's domain (its code runs from the checkout, in its Python).",
    )
    p.add_argument("checkout", type=Path, metavar="CHECKOUT", help="a tau2-bench checkout")
    p.add_argument(
        "--domain", required=True, help="the domain to import: retail, airline, telecom..."
    )
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="SUITE_DIR",
        help="Suite folder to write (must not hold a suite yet).",
    )
    p.add_argument(
        "--python",
        type=Path,
        default=None,
        metavar="PYTHON",
        help="the interpreter τ²-bench is installed in (default: CHECKOUT/.venv/bin/python, "
        "else python3)",
    )
    p.add_argument(
        "--tasks",
        type=Path,
        default=None,
        metavar="FILE",
        help="the task file (default: the domain's data/tau2/domains/DOMAIN/tasks.json)",
    )
    p.set_defaults(handler=_tau2)


def _common(p: argparse.ArgumentParser, fresh: bool = True) -> None:
    help_out = "Suite folder to write" + (
        " (must not hold a suite yet)."
        if fresh
        else " (an existing suite gets the recordings added)."
    )
    p.add_argument("--out", type=Path, required=True, metavar="SUITE_DIR", help=help_out)
    p.add_argument("--name", default=None, help="Suite name (default: the folder name).")


def _fresh(out: Path) -> None:
    out_folder(out, "--out")
    if (out / "suite.yaml").exists():
        raise ConfigError(f"{out} already holds a suite; choose an empty folder or remove it")


def _print(summary: ImportSummary) -> int:
    print(json.dumps(summary.to_json(), indent=2, ensure_ascii=False))
    return 0


def _queries(args: argparse.Namespace) -> int:
    _fresh(args.out)
    return _print(import_queries(args.files, args.out, args.name))


def _answers(args: argparse.Namespace) -> int:
    _fresh(args.out)
    if args.run_out is not None:
        out_folder(args.run_out, "--run-out")
    summary = import_answers(args.inputs, args.out, args.run_out, args.name, args.queries)
    _print(summary)
    for skip in summary.skipped:
        print(f"skipped {skip.source}: {skip.reason}", file=sys.stderr)
    for path in summary.runs.values():
        print(f"run folder: {path}", file=sys.stderr)
    return 0


def _cache(args: argparse.Namespace) -> int:
    out_folder(args.out, "--out")
    return _print(import_stb_cache(args.cache, args.out, args.name, keep_errors=args.keep_errors))


def _tau2(args: argparse.Namespace) -> int:
    from sandbox.interop.tau2_import import import_tau2

    _fresh(args.out)
    summary = import_tau2(
        args.checkout, args.domain, args.out, python=args.python, tasks_file=args.tasks
    )
    print(json.dumps(summary.to_json(), indent=2, ensure_ascii=False))
    return 0


def _tooleyes(args: argparse.Namespace) -> int:
    _fresh(args.out)
    return _print(import_tooleyes(args.root, args.out, args.name))


BFCL_CATEGORIES = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)


def _bfcl(args: argparse.Namespace) -> int:
    out_folder(args.out, "--out")
    if args.limit is not None and args.limit < 1:
        raise ConfigError("--limit must be at least 1")
    categories = [c.strip() for c in args.categories.split(",") if c.strip()]
    ids = [i.strip() for i in args.ids.split(",") if i.strip()] if args.ids else None
    done = import_bfcl(args.source, args.out, categories=categories, limit=args.limit, ids=ids)
    summary = {"suite": str(done.out), "bfcl_eval": done.version, "tasks": done.tasks}
    print(json.dumps(summary, indent=2))
    return 0
