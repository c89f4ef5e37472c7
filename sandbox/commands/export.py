"""``sandbox export toolbench RUN OUT``: a run in ToolBench's converted-answer format;
``sandbox export bfcl RUN --out DIR``: a run on a BFCL import as BFCL's result files."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from sandbox.commands import COMMANDS
from sandbox.commands.out_folder import out_folder
from sandbox.errors import ConfigError
from sandbox.interop.export_bfcl import DEFAULT_MODEL, export_bfcl
from sandbox.interop.export_toolbench import export_run

_PLAIN_NAME = re.compile(r"^[A-Za-z0-9._-]{1,200}$")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("export", help=COMMANDS["export"].help)
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="FORMAT")
    p = kinds.add_parser(
        "toolbench",
        help="ToolBench's converted answers (ToolEval's input): OUT/<set>.json per test set.",
    )
    p.add_argument("run", type=Path, metavar="RUN")
    p.add_argument("out", type=Path, metavar="OUT")
    p.set_defaults(handler=_toolbench)
    p = kinds.add_parser(
        "bfcl",
        help="BFCL's result files of a run on a BFCL import: "
        "DIR/result/<model>/multi_turn/<prefix>_<category>_result.json (bfcl evaluate's input).",
    )
    p.add_argument("run", type=Path, metavar="RUN")
    p.add_argument("--out", type=Path, required=True, metavar="DIR")
    p.add_argument(
        "--model-name",
        default=DEFAULT_MODEL,
        metavar="NAME",
        help="the model folder: a name BFCL's checker knows whose handler decodes OpenAI "
        f"function calls (default: {DEFAULT_MODEL})",
    )
    p.set_defaults(handler=_bfcl)
    p = kinds.add_parser(
        "tau2",
        help="τ²-bench's results format (tau2 evaluate-trajs re-grades it), for a run of a suite "
        "made by `sandbox import tau2`.",
    )
    p.add_argument("run", type=Path, metavar="RUN")
    p.add_argument(
        "--out", type=Path, default=None, metavar="FILE", help="the results file to write"
    )
    p.add_argument(
        "--against",
        type=Path,
        default=None,
        metavar="REGRADED",
        help="instead of writing: compare the run's rewards with those of this file "
        "(what `tau2 evaluate-trajs FILE -o DIR` wrote) and list each disagreement",
    )
    p.set_defaults(handler=_tau2)


def _toolbench(args: argparse.Namespace) -> int:
    out = out_folder(args.out, "OUT")
    run = args.run.resolve()
    if out.resolve() == run or run in out.resolve().parents:
        # a test set's file could replace one of the run's own (a set named `manifest`)
        raise ConfigError(f"OUT {out} is inside the run folder {args.run}: export beside it")
    print(json.dumps(export_run(args.run, out), indent=2))
    return 0


def _bfcl(args: argparse.Namespace) -> int:
    out = out_folder(args.out, "--out")
    if not _PLAIN_NAME.match(args.model_name) or set(args.model_name) == {"."}:
        raise ConfigError(
            f"--model-name {args.model_name!r}: a folder name BFCL's checker knows "
            "(letters, digits, '.', '_', '-')"
        )
    run = args.run.resolve()
    if out.resolve() == run or run in out.resolve().parents:
        raise ConfigError(f"--out {out} is inside the run folder {args.run}: export beside it")
    print(json.dumps(export_bfcl(args.run, out, model=args.model_name), indent=2))
    return 0


def _tau2(args: argparse.Namespace) -> int:
    from sandbox.interop.export_tau2 import agreement, export_tau2

    if not (args.run / "manifest.json").is_file():
        raise ConfigError(f"export tau2: {args.run} is not a run folder (no manifest.json)")
    if args.against is not None:
        if not args.against.is_file():
            raise ConfigError(f"export tau2: no such file: {args.against}")
        print(json.dumps(agreement(args.run, args.against), indent=2))
        return 0
    if args.out is None:
        raise ConfigError("export tau2: give --out FILE (or --against REGRADED)")
    run = args.run.resolve()
    if run in args.out.resolve().parents:  # it could replace the run's own manifest.json
        raise ConfigError(f"--out {args.out} is inside the run folder {args.run}: export beside it")
    if args.out.exists() or args.out.is_symlink():  # a results file is written whole, never over
        raise ConfigError(f"export tau2: --out {args.out} exists: name a new file")
    try:
        out_folder(args.out.parent, "--out's folder").mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(
            f"export tau2: cannot make --out's folder {args.out.parent}: {e}"
        ) from None
    print(json.dumps(export_tau2(args.run, args.out), indent=2))
    return 0
