"""Every flag of every command, given a value it cannot use, ends in one ``error:`` line (and at
most a hint line) with exit 2 for a bad option or 1 for a run folder problem: never a traceback,
never exit 0 as if the value were fine (hardening round two: "every user-facing error is one
line").

The commands and their flags are read from the parser itself (``sandbox.cli.build_parser``), so a
flag added later is walked too; each command gets a base command line that works (``BASES``) and
each flag in turn a value that is wrong for what it means (``invalid_value``): a word no choice
matches, a number out of its range, a path that is missing or is a file where a folder is meant,
an unknown name. ``serve`` and ``view`` (which would start a server on a value they take) run in
a subprocess with a timeout; the others in process.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pytest

from mock_tools.overlay import OVERLAY_FILE, OverlayStore
from sandbox.cli import build_parser, main
from tests.hostile.conftest import MINI, ROOT
from tests.hostile.test_run_records import make_run

ANSWERS = ROOT / "tests" / "fixtures" / "stabletoolbench" / "data" / "answer" / "G1_instruction"
BFCL = ROOT / "tests" / "fixtures" / "bfcl" / "copy"
TAU2 = ROOT / "tests" / "fixtures" / "tau2"
BFCL_CAT = "multi_turn_base"
MISSING = "{file}/no-such"
"""A path nothing can be or create (even as root): its parent is a file."""

BASES: dict[str, list[str]] = {
    "run": ["--suite", str(MINI), "--model", "reference", "--out", "{out}", "--no-plots"],
    "compare": [
        "--agents",
        "react",
        "--suite",
        str(MINI),
        "--model",
        "reference",
        "--out",
        "{out}",
    ],
    "eval": ["{run}", "--no-plots"],
    "probe": ["--suite", str(MINI), "--model", "reference", "--tasks", "mini_u_refund"],
    "replay": ["{run}"],
    "rescore": ["{run}", "--no-plots"],
    "import toolbench-queries": ["{queries}", "--out", "{out}/q"],
    "import toolbench-answers": [str(ANSWERS), "--out", "{out}/a"],
    "import stb-cache": ["{cache}", "--out", "{out}/c"],
    "import tooleyes": ["{tooleyes}", "--out", "{out}/t"],
    "export toolbench": ["{run}", "{out}/answers"],
    "import bfcl": ["{bfcl}", "--categories", "multi_turn_base", "--out", "{out}/b"],
    "export bfcl": ["{bfcl_run}", "--out", "{out}/bfcl"],
    "import tau2": [
        str(TAU2),
        "--domain",
        "library",
        "--python",
        sys.executable,
        "--out",
        "{out}/l",
    ],
    "export tau2": ["{tau2_run}", "--out", "{out}/tau2.json"],
    "suite stats": ["{suite}"],
    "suite freeze": ["{suite}"],
    "view": ["{run}", "--port", "0"],
    "leaderboard": ["{run}"],
    "serve": ["{suite}", "--port", "0"],
    "launch": ["smollm2-135m", "--print"],  # prints the server's command, starts nothing
}
"""A command line of each command that works (checked by the first test)."""

SERVERS = ("serve", "view")
"""Commands that serve until stopped when their values are fine: walked in a subprocess."""

BY_FLAG: dict[str, str] = {
    "--out": "{file}",
    "--run-out": "{file}",
    "--export": "{file}",
    "--run-id": "../escape",
    "--system-prompt": "   ",
    "--seed": "seven",
    "--fault-seed": "seven",
    "--trial": "-1",
    "--until-step": "-1",
    "--port": "70000",
    "--host": "999.1.1.1",
    "--tasks": "no-such-task",
    "--task": "no-such-task",
    "--task-setting": "no-such-task={{}}",
    "--set": "no.such.setting=1",
    "--name": "../x",
    "--agents": "no-such-agent",
    "--runs": MISSING,
    "--fault-rate": "2",
    "--judge-temperature": "-1",
    "--recording-scope": "   ",
}
"""Values that are wrong for what the flag means, where the kind of the flag does not say."""

BY_COMMAND_FLAG: dict[tuple[str, str], str] = {
    ("probe", "--out"): MISSING,  # a file it writes: a file is fine, one below a file is not
    ("import toolbench-queries", "--name"): "   ",  # any text names a suite, but blank
    ("import toolbench-answers", "--name"): "   ",
    ("import stb-cache", "--name"): "   ",
    ("import tooleyes", "--name"): "   ",
}


def invalid_value(command: str, action: argparse.Action) -> list[str]:
    """The flag given a value it cannot take, as command-line words."""
    flag = action.option_strings[-1]
    if action.nargs == 0:  # a switch: a value given to it is the mistake
        return [f"{flag}=yes"]
    if (command, flag) in BY_COMMAND_FLAG:
        return [flag, BY_COMMAND_FLAG[command, flag]]
    if flag in BY_FLAG:
        return [flag, BY_FLAG[flag]]
    if action.choices:
        return [flag, "no-such-choice"]
    if action.type in (int, float):
        return [flag, "-5"]
    if action.metavar and "=" in str(action.metavar):  # KEY=VALUE
        return [flag, "no_such_option=1"]
    return [flag, MISSING]


def leaf_commands() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every command and subcommand with its parser, e.g. ``("import stb-cache", parser)``."""

    def walk(parser: argparse.ArgumentParser, words: list[str]) -> Iterator[tuple[str, ...]]:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            yield " ".join(words), parser
        for sub in subs:
            for name, child in sub.choices.items():
                yield from walk(child, [*words, name])

    yield from walk(build_parser(), [])


def without_flag(words: list[str], action: argparse.Action) -> list[str]:
    """``words`` without ``action``'s flag (and its value) if the base gives it."""
    out, skip = [], False
    for word in words:
        if skip:
            skip = False
            continue
        if word in action.option_strings:
            skip = action.nargs != 0
            continue
        out.append(word)
    return out


def one_error(code: int, err: str) -> str | None:
    """None when the outcome is a one-line error with exit 1 or 2; else what is wrong."""
    if "Traceback" in err:
        return f"a traceback: {err.strip().splitlines()[-1]}"
    if code not in (1, 2):
        return f"exit {code}"
    shown = err.strip().splitlines()
    errors = [i for i, line in enumerate(shown) if line.startswith("error: ")]
    if len(errors) != 1 or len(shown) - errors[0] > 2:
        return f"not one error line: {err.strip()[-300:]!r}"
    return None


@contextmanager
def at_most(seconds: int) -> Iterator[None]:
    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def in_process(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    try:
        with at_most(90):
            code = main(argv)
    except SystemExit as e:
        code = int(e.code or 0)
    return code, capsys.readouterr().err


def in_subprocess(argv: list[str]) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "sandbox", *argv],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=15,
        )
    except subprocess.TimeoutExpired:
        return 0, "it started serving"
    return done.returncode, done.stderr


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """What the base command lines name: a run, a suite of one's own, import inputs, a file."""
    root = tmp_path_factory.mktemp("walk")
    suite = root / "suite"
    shutil.copytree(MINI, suite)
    OverlayStore(suite / OVERLAY_FILE).close()  # an empty overlay: what `suite freeze` reads
    queries = root / "queries.json"
    api = {"category_name": "Finance", "tool_name": "Coins", "api_name": "price"}
    api |= {"api_description": "A price.", "required_parameters": [], "optional_parameters": []}
    queries.write_text(json.dumps([{"query": "Price?", "query_id": 1, "api_list": [api]}]))
    cache = root / "cache" / "Finance" / "coins"
    cache.mkdir(parents=True)
    (cache / "price.json").write_text(json.dumps({"{'a': 1}": {"error": "", "response": "1"}}))
    tooleyes = root / "tooleyes"
    lib = tooleyes / "Tool_Library" / "Weather" / "openweather"
    lib.mkdir(parents=True)
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    function = {"name": "current", "description": "Weather now.", "parameters": schema}
    (lib / "config_gpt4.json").write_text(json.dumps([function]))
    (tooleyes / "Test_Data").mkdir()
    query = {"query": "Weather?", "path": "Tool_Library/Weather/openweather", "scenario": "IS"}
    (tooleyes / "Test_Data" / "scenario_data_raw.json").write_text(json.dumps([query]))
    file = root / "a-file"
    file.write_text("not a folder")
    bfcl_suite, bfcl_runs = root / "bfcl-suite", root / "bfcl-runs"
    assert (
        main(["import", "bfcl", str(BFCL), "--out", str(bfcl_suite), "--categories", BFCL_CAT]) == 0
    )
    argv = ["run", "--suite", str(bfcl_suite), "--model", "reference", "--out", str(bfcl_runs)]
    assert main([*argv, "--no-plots", "--run-id", "bfcl"]) == 0
    tau2_suite, tau2_runs = root / "tau2-suite", root / "tau2-runs"
    argv = ["import", "tau2", str(TAU2), "--domain", "library", "--python", sys.executable]
    assert main([*argv, "--out", str(tau2_suite)]) == 0
    argv = ["run", "--suite", str(tau2_suite), "--model", "reference", "--out", str(tau2_runs)]
    assert main([*argv, "--no-plots", "--run-id", "tau2"]) == 0
    return {
        "tau2_run": str(tau2_runs / "tau2"),
        "bfcl": str(BFCL),
        "bfcl_run": str(bfcl_runs / "bfcl"),
        "run": str(make_run(root / "runs")),
        "suite": str(suite),
        "queries": str(queries),
        "cache": str(root / "cache"),
        "tooleyes": str(tooleyes),
        "file": str(file),
    }


def _base(command: str, places: dict[str, str], out: Path) -> list[str]:
    return [w.format(out=out, **places) for w in [*command.split(), *BASES[command]]]


def test_every_command_is_walked_from_a_base_that_works(
    places: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commands = {name for name, _ in leaf_commands()}
    assert commands == set(BASES)  # a new command needs a base here
    for command in sorted(commands - set(SERVERS)):
        out = tmp_path / command.replace(" ", "-")
        code, err = in_process(_base(command, places, out), capsys)
        assert code == 0, (command, err)


@pytest.mark.parametrize("command", sorted(BASES))
def test_every_flag_with_an_invalid_value_is_one_error_line_never_a_traceback_or_exit_0(
    command: str, places: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = dict(leaf_commands())[command]
    flags = [a for a in parser._actions if a.option_strings and a.dest != "help"]
    cases = []
    for i, action in enumerate(flags):
        out = tmp_path / str(i)
        base = without_flag(_base(command, places, out), action)
        wrong = [w.format(out=out, **places) for w in invalid_value(command, action)]
        cases.append((action.option_strings[-1], [*base, *wrong]))
    if command in SERVERS:
        with ThreadPoolExecutor(max_workers=2) as pool:
            outcomes = list(pool.map(lambda case: in_subprocess(case[1]), cases))
    else:
        outcomes = [in_process(argv, capsys) for _, argv in cases]
    wrong = {
        " ".join(argv[-2:]): problem
        for (flag, argv), outcome in zip(cases, outcomes, strict=True)
        if (problem := one_error(*outcome)) is not None
    }
    assert wrong == {}
