"""Hardening round three, issue 39 item 1: plugins are untrusted for correctness.

Each plugin below lives in this module and is named by path (``tests.hostile.test_plugin_code:
Name``), as a user's own code is. What it raises (``SystemExit``, ``KeyboardInterrupt`` and a
``CancelledError`` of its own included) or returns is the plugin's outcome: an episode recorded
with an error naming it while the run goes on, or, where nothing can go on, one line naming the
plugin and exit 2 with nothing written; never a traceback, never exit 0 without scores.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agents import ReActAgent
from agents.plugin_calls import PluginFailed, plugin_code, returned, unit_rate
from mock_tools.miss import ErrorPolicy
from sandbox.eval.pass_rate import PassSummary
from sandbox.eval.protocol_default import DefaultProtocol
from sandbox.eval.steps import StepMetric
from sandbox.eval.steps.measure import Measure
from sandbox.run.executor import ExecutorKind, LocalExecutor
from sandbox.tool_envs.factory import TOOL_TRANSPORTS, ClientOptions, ToolTransport
from tests.hostile.conftest import MINI, sandbox
from tests.hostile.test_one_line_errors import cli
from tests.hostile.test_run_records import make_run, one_error_line

HERE = "tests.hostile.test_plugin_code"


def _run(tmp_path: Path, *flags: str) -> list[str]:
    out = str(tmp_path / "runs")
    return ["run", "--suite", str(MINI), "--model", "reference", "--out", out, "--json", *flags]


def _episodes(tmp_path: Path) -> list[dict[str, Any]]:
    (run,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    text = (run / "trajectories.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


# -- strategies ------------------------------------------------------------------------------


class Exits(ReActAgent):
    name = "exits"

    async def run(self, **_: Any) -> Any:
        sys.exit(0)


class Interrupts(ReActAgent):
    name = "interrupts"

    async def run(self, **_: Any) -> Any:
        raise KeyboardInterrupt


class CancelsItself(ReActAgent):
    name = "cancels-itself"

    async def run(self, **_: Any) -> Any:
        raise asyncio.CancelledError


class ReturnsNone(ReActAgent):
    name = "returns-none"

    async def run(self, **_: Any) -> Any:
        return None


class ReturnsDict(ReActAgent):
    name = "returns-dict"

    async def run(self, **_: Any) -> Any:
        return {"status": "answered"}


class OtherTask(ReActAgent):
    name = "other-task"

    async def run(self, **kw: Any) -> Any:
        traj = await super().run(**kw)
        traj.scenario_id = "not-a-task-of-the-run"
        return traj


class Unreadable(ReActAgent):
    name = "unreadable"

    async def run(self, **kw: Any) -> Any:
        traj = await super().run(**kw)
        traj.chosen_path = [99]  # no such node: no reader would read the line back
        return traj


class Stubborn(ReActAgent):
    name = "stubborn"

    async def run(self, **_: Any) -> Any:
        while True:
            with contextlib.suppress(asyncio.CancelledError):  # swallowed: it awaits again
                await asyncio.sleep(3600)


class NeverReturns(ReActAgent):
    name = "never-returns"

    async def run(self, **_: Any) -> Any:
        await asyncio.sleep(3600)


@pytest.mark.parametrize(
    ("strategy", "reason", "says"),
    [
        ("Exits", "internal_error:SystemExit", "SystemExit: 0 (in agent 'exits'"),
        ("Interrupts", "internal_error:KeyboardInterrupt", "KeyboardInterrupt (in agent"),
        ("CancelsItself", "internal_error:CancelledError", "raised it of its own"),
        ("ReturnsNone", "internal_error:NotATrajectory", "returned NoneType, not a Trajectory"),
        ("ReturnsDict", "internal_error:NotATrajectory", "returned dict, not a Trajectory"),
        ("OtherTask", "internal_error:NotATrajectory", "of task 'not-a-task-of-the-run'"),
        ("Unreadable", "internal_error:NotATrajectory", "no reader can read back"),
    ],
)
def test_39_1_what_a_strategy_raises_or_returns_ends_its_episode_and_the_run_goes_on(
    strategy: str, reason: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main: sys.exit(0) ended the run with exit 0 and nothing scored, KeyboardInterrupt
    with 130, CancelledError, None and a dict with a traceback (exit 1), and a trajectory of
    another task made a run no reader could read."""
    code, err = cli(_run(tmp_path, "--agent", f"{HERE}:{strategy}"), capsys)
    assert code == 0 and "Traceback" not in err, err
    episodes = _episodes(tmp_path)
    assert len(episodes) == 4
    for traj in episodes:
        assert (traj["status"], traj["end_reason"]) == ("error", reason)
        assert says in traj["errors"][0]["message"] and traj["errors"][0]["kind"] == "internal"
    run = next((tmp_path / "runs").iterdir())
    assert json.loads((run / "scores.json").read_text())["pass_rate"]["n"] == 4


def test_39_1_a_strategy_that_never_returns_is_stopped_by_the_wall_clock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main it held the run forever; the episode's max_seconds bounds it like any other."""
    started = time.monotonic()
    flags = ["--agent", f"{HERE}:NeverReturns", "--max-seconds", "0.2", "--tasks", "mini_g1_track"]
    code, err = cli(_run(tmp_path, *flags), capsys)
    assert code == 0 and time.monotonic() - started < 30, err
    (traj,) = _episodes(tmp_path)
    assert (traj["status"], traj["end_reason"]) == ("budget_exhausted", "budget:max_seconds")
    assert traj["errors"][0]["kind"] == "agent"
    assert "did not return within --max-seconds" in traj["errors"][0]["message"]


def test_39_1_a_strategy_that_swallows_its_cancellation_does_not_keep_the_process_alive(
    tmp_path: Path,
) -> None:
    """On main the episode was recorded and scored, but the process never exited: asyncio.run
    waited at shutdown for the task that ignored its cancellation. Now the run ends with its
    own exit code a few seconds later, naming the strategy it left running."""
    flags = ["--agent", f"{HERE}:Stubborn", "--max-seconds", "0.5", "--tasks", "mini_g1_track"]
    started = time.monotonic()
    proc = sandbox(*_run(tmp_path, *flags, "--no-plots"), cwd=tmp_path)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    took = time.monotonic() - started
    text = err.decode()
    assert proc.returncode == 0 and "Traceback" not in text, text
    assert "strategy Stubborn.run (waiting at test_plugin_code.py:" in text
    assert "ignored its cancellation when the command ended; leaving it running" in text
    (traj,) = _episodes(tmp_path)
    assert (traj["status"], traj["end_reason"]) == ("budget_exhausted", "budget:max_seconds")
    run = next((tmp_path / "runs").iterdir())
    assert json.loads((run / "scores.json").read_text())["pass_rate"]["n"] == 1
    assert took < 45, took


# -- evaluation protocols --------------------------------------------------------------------


class LabelsOne(DefaultProtocol):
    name = "labels-one"

    async def label(self, trajs: Any, tasks: Any, keys: Any, judge: Any, settings: Any) -> Any:
        return (await super().label(trajs, tasks, keys, judge, settings))[:1]


def _with_rate(value: float) -> type[DefaultProtocol]:
    class Rate(DefaultProtocol):
        name = f"rate-{value}"

        def summarise(self, labels: Any, tasks: Any, *, seed: int) -> PassSummary:
            got = super().summarise(labels, tasks, seed=seed)
            rate = got.pass_rate.model_copy(update={"value": value})
            return got.model_copy(update={"pass_rate": rate})

    return Rate


RateOver = _with_rate(7.5)
RateNaN = _with_rate(math.nan)


class LabelExits(DefaultProtocol):
    name = "label-exits"

    async def label(self, *_: Any) -> Any:
        sys.exit(0)


class LabelsText(DefaultProtocol):
    name = "labels-text"

    async def label(self, trajs: Any, tasks: Any, keys: Any, judge: Any, settings: Any) -> Any:
        return ["solved" for _ in keys]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("recorded"))


@pytest.mark.parametrize(
    ("protocol", "says"),
    [
        ("LabelsOne", "label() broke its contract: it gave 1 label(s) for 4 episode(s)"),
        ("RateOver", "pass_rate.value is 7.5, not a number in [0, 1]"),
        ("RateNaN", "pass_rate.value is nan, not a number in [0, 1]"),
        ("LabelExits", "label() raised SystemExit: 0"),
        ("LabelsText", "item 0 is a str, not a EpisodeLabel"),
    ],
)
def test_39_1_a_protocol_that_raises_or_breaks_its_contract_is_one_line_and_nothing_written(
    protocol: str, says: str, recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main: 22 of 23 episodes read as missing, pass_rate 7.5 and NaN written to
    scores.json, exit 0 with nothing scored after sys.exit(0), a traceback for labels that are
    text."""
    before = (recorded / "scores.json").read_bytes()
    code, err = cli(["eval", str(recorded), "--protocol", f"{HERE}:{protocol}"], capsys)
    line = one_error_line(err)
    assert code == 2 and says in line and "evaluation protocol" in line, err
    assert (recorded / "scores.json").read_bytes() == before


# -- step metrics ----------------------------------------------------------------------------


def _metric(name: str, score: Any) -> StepMetric:
    return StepMetric(name=name, summary="a hostile metric", measures=("x",), score=score)


def _exit(*_: Any) -> Any:
    sys.exit(3)


METRIC_RAISES = _metric("raises", lambda ep, o: 1 / 0)
METRIC_EXITS = _metric("exits", _exit)
METRIC_NONE = _metric("none", lambda ep, o: None)
METRIC_OVER = _metric("over", lambda ep, o: {"x": Measure(value=7.5, n=1)})
METRIC_NAN = _metric("nan", lambda ep, o: {"x": Measure(value=math.nan, n=1)})
METRIC_FLOAT = _metric("float", lambda ep, o: {"x": 0.5})


@pytest.mark.parametrize(
    ("metric", "says"),
    [
        ("METRIC_RAISES", "step metric 'raises' raised ZeroDivisionError"),
        ("METRIC_EXITS", "step metric 'exits' raised SystemExit: 3"),
        ("METRIC_NONE", "returned NoneType, not a mapping of measures"),
        ("METRIC_OVER", "measure 'x' is 7.5, not a number in [0, 1]"),
        ("METRIC_NAN", "measure 'x' is nan, not a number in [0, 1]"),
        ("METRIC_FLOAT", "measure 'x' is a float, not a Measure"),
    ],
)
def test_39_1_a_step_metric_that_raises_or_scores_out_of_range_is_one_line(
    metric: str, says: str, recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main: tracebacks, exit 3 from the metric's sys.exit, and 7.5 or NaN step scores
    written."""
    before = (recorded / "scores.json").read_bytes()
    code, err = cli(["eval", str(recorded), "--step-metric", f"{HERE}:{metric}"], capsys)
    assert code == 2 and says in one_error_line(err), err
    assert (recorded / "scores.json").read_bytes() == before


# -- miss policies ---------------------------------------------------------------------------


class PolicyRaises(ErrorPolicy):
    name = "policy-raises"

    async def answer(self, miss: Any) -> Any:
        raise ValueError("policy boom")


class PolicyExits(ErrorPolicy):
    name = "policy-exits"

    async def answer(self, miss: Any) -> Any:
        sys.exit(0)


class PolicyText(ErrorPolicy):
    name = "policy-text"

    async def answer(self, miss: Any) -> Any:
        return "an answer"


class PolicyCloseExits(ErrorPolicy):
    name = "policy-close-exits"

    async def aclose(self) -> None:
        raise SystemExit(4)


class PolicyInitFails(ErrorPolicy):
    name = "policy-init-fails"

    def __init__(self, options: Any) -> None:
        raise RuntimeError("cannot start")


@pytest.fixture
def missing_suite(tmp_path: Path) -> Path:
    """The mini suite without the shop's recordings: its reference calls are misses."""
    import shutil

    suite = tmp_path / "suite"
    shutil.copytree(MINI, suite, ignore=shutil.ignore_patterns(".cache"))
    (suite / "recordings" / "shop.jsonl").write_text("")
    return suite


@pytest.mark.parametrize(
    ("policy", "says"),
    [
        ("PolicyRaises", "raised ValueError: policy boom"),
        ("PolicyExits", "raised SystemExit: 0"),
        ("PolicyText", "returned str, not a MissAnswer or None"),
    ],
)
def test_39_1_a_miss_policy_that_fails_answers_an_infrastructure_error_and_the_run_goes_on(
    policy: str,
    says: str,
    missing_suite: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """On main: the episode crashed with the policy's exception as an internal error, and a
    policy's sys.exit(0) ended the run with exit 0 and a traceback."""
    argv = _run(tmp_path, "--miss-policy", f"{HERE}:{policy}")
    argv[2] = str(missing_suite)
    code, err = cli(argv, capsys)
    assert code == 0 and "Traceback" not in err, err
    failed = [t for t in _episodes(tmp_path) if t["status"] == "error"]
    assert failed and all(t["errors"][0]["kind"] == "infra" for t in failed)
    assert all(says in t["errors"][0]["message"] for t in failed)
    assert all("the miss policy failed" in t["errors"][0]["message"] for t in failed)


def test_39_1_a_miss_policy_that_fails_to_build_or_close_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """On main: a traceback (exit 1) for the first, the run ended with the policy's exit 4 for
    the second."""
    code, err = cli(_run(tmp_path, "--miss-policy", f"{HERE}:PolicyInitFails"), capsys)
    assert code == 2 and "raised RuntimeError: cannot start" in one_error_line(err)
    code, err = cli(_run(tmp_path, "--miss-policy", f"{HERE}:PolicyCloseExits"), capsys)
    assert code == 0, err
    assert "'policy-close-exits' (closing) raised SystemExit: 4" in caplog.text


# -- tool transports -------------------------------------------------------------------------


def _in_process(config: Any, suite: Any, env: Any, options: Any) -> Any:
    return TOOL_TRANSPORTS.get("in-process").open(config, suite, env, options)


class _EnterInterrupts:
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __aenter__(self) -> Any:
        raise KeyboardInterrupt

    async def __aexit__(self, *exc: Any) -> None:
        return None

    def for_episode(self, task: Any, *, session: str) -> Any:
        return self.inner.for_episode(task, session=session)

    def report(self) -> dict[str, Any]:
        return {}


OPEN_RAISES = ToolTransport("open-raises", lambda c, s, e, o: 1 / 0, options=ClientOptions)
OPEN_NONE = ToolTransport("open-none", lambda c, s, e, o: None, options=ClientOptions)
OPEN_EXITS = ToolTransport("open-exits", _exit, options=ClientOptions)
ENTER_INTERRUPTS = ToolTransport(
    "enter-interrupts",
    lambda c, s, e, o: _EnterInterrupts(_in_process(c, s, e, o)),
    options=ClientOptions,
)


@pytest.mark.parametrize(
    ("transport", "says"),
    [
        ("OPEN_RAISES", "tool transport 'open-raises' raised ZeroDivisionError"),
        ("OPEN_NONE", "open() returned a NoneType without __aenter__"),
        ("OPEN_EXITS", "tool transport 'open-exits' raised SystemExit: 3"),
        ("ENTER_INTERRUPTS", "(entering its tools) raised KeyboardInterrupt"),
    ],
)
def test_39_1_a_transport_that_raises_or_opens_nothing_is_one_line_exit_2(
    transport: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main: tracebacks (exit 1), exit 0 with no run after sys.exit, and a transport's
    KeyboardInterrupt read as Ctrl-C (exit 130)."""
    code, err = cli(_run(tmp_path, "--transport", f"{HERE}:{transport}"), capsys)
    assert code == 2 and says in one_error_line(err), err
    assert not any((tmp_path / "runs").iterdir())  # no run: nothing was recorded


# -- executors -------------------------------------------------------------------------------


class _RunRaises(LocalExecutor):
    async def run(self, batch: Any, done: Any) -> None:
        raise ValueError("executor boom")


class _RunExits(LocalExecutor):
    async def run(self, batch: Any, done: Any) -> None:
        sys.exit(0)


class _Forgets(LocalExecutor):
    async def run(self, batch: Any, done: Any) -> None:
        batch.todo = batch.todo[:1]
        await super().run(batch, done)


class _Twice(LocalExecutor):
    async def run(self, batch: Any, done: Any) -> None:
        def twice(task: Any, trial: int, traj: Any) -> None:
            done(task, trial, traj)
            done(task, trial, traj)

        await super().run(batch, twice)


RUN_RAISES = ExecutorKind("run-raises", lambda c, o: _RunRaises())
RUN_EXITS = ExecutorKind("run-exits", lambda c, o: _RunExits())
FORGETS = ExecutorKind("forgets", lambda c, o: _Forgets())
TWICE = ExecutorKind("twice", lambda c, o: _Twice())
BUILDS_NONE = ExecutorKind("builds-none", lambda c, o: None)
BUILD_EXITS = ExecutorKind("build-exits", _exit)


@pytest.mark.parametrize(
    ("executor", "says"),
    [
        ("RUN_RAISES", "raised ValueError: executor boom"),
        ("RUN_EXITS", "raised SystemExit: 0"),
        ("FORGETS", "it returned with 3 episode(s) never reported"),
        ("TWICE", "reported episode 'mini_g1_kettle_price' trial 0 twice"),
        ("BUILDS_NONE", "its builder returned a NoneType, not an executor"),
        ("BUILD_EXITS", "executor 'build-exits' raised SystemExit: 3"),
    ],
)
def test_39_1_an_executor_that_raises_or_breaks_its_contract_is_one_line_exit_2(
    executor: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main: tracebacks, exit 0 with no run after sys.exit, and runs that forgot 3 of 4
    episodes or reported one twice ended completed."""
    code, err = cli(_run(tmp_path, "--executor", f"{HERE}:{executor}"), capsys)
    line = one_error_line(err)
    assert code == 2 and says in line and "executor" in line, err
    for manifest in (tmp_path / "runs").glob("*/manifest.json"):  # what was kept, resumable
        assert json.loads(manifest.read_text())["status"] == "failed"


# -- loading ---------------------------------------------------------------------------------


@pytest.mark.parametrize("raised", ["RuntimeError('no')", "SystemExit(0)", "KeyboardInterrupt"])
def test_39_1_a_plugin_module_that_raises_while_it_imports_is_one_line(
    raised: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """On main: a traceback for anything but ImportError and AttributeError; SystemExit(0)
    ended the command with exit 0."""
    name = f"raising_plugin_{abs(hash(raised))}"
    (tmp_path / f"{name}.py").write_text(f"raise {raised}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    code, err = cli(_run(tmp_path, "--agent", f"{name}:Agent"), capsys)
    assert code == 2 and f"cannot import agent {name}:Agent" in one_error_line(err), err


# -- the shared guard ------------------------------------------------------------------------


def test_plugin_code_names_the_plugin_and_lets_a_cancellation_from_outside_through() -> None:
    with (
        pytest.raises(PluginFailed, match=r"^thing 'x' raised SystemExit: 2$"),
        plugin_code("thing 'x'"),
    ):
        sys.exit(2)
    with (
        pytest.raises(PluginFailed, match=r"^thing 'x' raised CancelledError of its own$"),
        plugin_code("thing 'x'"),
    ):
        raise asyncio.CancelledError

    async def cancelled() -> None:
        task = asyncio.ensure_future(asyncio.sleep(3600))

        async def inside() -> None:
            with plugin_code("thing 'x'"):
                await task

        outer = asyncio.ensure_future(inside())
        await asyncio.sleep(0)
        outer.cancel()  # from outside: the caller's cancellation, not the plugin's
        with pytest.raises(asyncio.CancelledError):
            await outer
        task.cancel()

    asyncio.run(cancelled())


@pytest.mark.parametrize("value", [-0.01, 1.01, math.nan, math.inf, "0.5", True, None])
def test_unit_rate_refuses_what_is_no_rate(value: Any) -> None:
    with pytest.raises(PluginFailed, match=r"^p broke its contract: r is .*, not a number"):
        unit_rate("p", "r", value)


@pytest.mark.parametrize("value", [0, 0.0, 0.5, 1, 1.0])
def test_unit_rate_keeps_a_rate(value: float) -> None:
    assert unit_rate("p", "r", value) == value


def test_returned_names_what_came_back() -> None:
    assert returned("p", [1], list, "a list") == [1]
    with pytest.raises(PluginFailed, match=r"^p returned int, not a list$"):
        returned("p", 1, list, "a list")
