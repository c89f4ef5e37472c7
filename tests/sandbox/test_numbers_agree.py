"""Numbers you can trust (issue 23): every command shows a run's pass rate as ``sandbox eval``
does, nothing is compared against nothing, a rate over nothing is ``n/a``, and plots belong to
the scores beside them. One regression test per defect the issue lists, through the command
line (and the viewer's HTTP API where it shows the figure)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from sandbox.cli import main
from sandbox.view.app import create_app
from tests.agents.models.openai_server import (
    Reply,
    ScriptedOpenAIServer,
    default_reply,
    raw_reply,
    scripted_alias,
    text_reply,
)

ROOT = Path(__file__).resolve().parents[2]
MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"


@pytest.fixture(autouse=True)
def _scripted_alias(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The ``scripted`` alias: an endpoint the test starts, retried twice 10 ms apart."""
    scripted_alias(monkeypatch, tmp_path)


def _json(capsys: pytest.CaptureFixture[str], argv: list[str], code: int = 0) -> object:
    """What the command printed as JSON (the leaderboard's indented array, else the last line)."""
    assert main(argv) == code
    out = capsys.readouterr().out.strip()
    return json.loads(out) if out.startswith("[") else json.loads(out.splitlines()[-1])


def _run(out: Path, run_id: str, *extra: str, model: str = "noisy-reference:0.5") -> Path:
    argv = ["run", "--suite", str(MINI), "--agent", "react", "--model", model]
    assert main([*argv, "--out", str(out), "--run-id", run_id, "--no-plots", *extra]) == 0
    return out / run_id


def _row(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    (row,) = _json(capsys, ["leaderboard", *argv, "--json"])  # type: ignore[misc]
    return row


def _same_headline(row: dict, line: dict) -> None:
    assert row["pass_rate"] == pytest.approx(line["pass_rate"])
    assert row["n"] == line["n"]
    assert (row["pass_rate_ci"] is None) == (line["pass_rate_ci"] is None)
    if line["pass_rate_ci"] is not None:
        assert row["pass_rate_ci"] == pytest.approx(line["pass_rate_ci"])


def test_the_leaderboard_leaves_out_the_infra_errors_eval_leaves_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the leaderboard counted the episodes ``eval`` leaves out (an infrastructure error
    scored 0), so it showed another rate over another n than ``eval``."""

    def kettle_breaks(body: dict) -> Reply:
        broken = "kettle" in json.dumps(body["messages"])
        return raw_reply("<html>502</html>") if broken else default_reply(body)

    with ScriptedOpenAIServer() as server:
        server.default = kettle_breaks
        monkeypatch.setenv("SANDBOX_SCRIPTED_BASE_URL", server.base_url)
        run = _run(tmp_path / "runs", "r", model="scripted")
    capsys.readouterr()
    line = _json(capsys, ["eval", str(run), "--json", "--no-plots"])
    assert isinstance(line, dict) and line["excluded"] == {"infra": 1} and line["n"] == 3
    row = _row(capsys, str(run))
    _same_headline(row, line)
    assert row["excluded"] == {"infra": 1} and row["infra_errors"] == 1


def test_an_eval_where_every_judge_reply_failed_shows_n_a_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``scores.json`` held 0.0 with an interval [0, 0], ``eval`` printed "0.0% [0.0,
    0.0]" and the leaderboard 100%. Now every output says there is no rate: n/a, null."""
    run = _run(tmp_path / "runs", "r", model="reference")  # every episode needs the judge
    with ScriptedOpenAIServer() as server:
        server.default = text_reply("I would rather not say.")  # never the forced function
        judge = ["--protocol", "toolbench", "--judge", f"openai:scripted@{server.base_url}"]
        capsys.readouterr()
        line = _json(capsys, ["eval", str(run), *judge, "--json", "--no-plots"], code=1)
        assert main(["eval", str(run), *judge, "--no-plots"]) == 1
    table = capsys.readouterr().out
    assert isinstance(line, dict) and line["n"] == 0
    assert line["pass_rate"] is None and line["pass_rate_ci"] is None
    assert "│ all   │ 0 │      0 │      0 │        0 │                n/a │" in table
    assert " 0.0% [" not in table
    report = (run / "report.md").read_text()
    assert "| all | 0 | 0 | 0 | 0 | n/a |" in report and " 0.0% [" not in report
    row = _row(capsys, str(run))
    assert row["pass_rate"] is None and row["pass_rate_ci"] is None and row["n"] == 0
    assert row["headline"]["text"] == "n/a" and row["excluded"] == {"judge_error": 4}
    assert main(["leaderboard", str(run)]) == 0
    assert "n/a" in capsys.readouterr().out
    client = TestClient(create_app(tmp_path / "runs"))
    (entry,) = client.get("/api/runs").json()
    assert entry["headline"] == row["headline"]
    (shown,) = client.get("/api/leaderboard").json()["rows"]
    assert shown["headline"]["text"] == "n/a"
    rescored = _json(capsys, ["rescore", str(run), "--json", "--no-plots"])
    assert isinstance(rescored, dict)
    assert rescored["old_pass_rate"] is None and rescored["pass_rate"] == 1.0


def test_a_run_with_nothing_to_count_prints_n_a_and_json_null(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every episode an infrastructure error: n is 0, and ``sandbox run`` says so instead of
    printing "0.0%" with an interval."""
    with ScriptedOpenAIServer() as server:
        server.default = raw_reply("<html>502</html>")
        monkeypatch.setenv("SANDBOX_SCRIPTED_BASE_URL", server.base_url)
        argv = ["run", "--suite", str(MINI), "--agent", "react", "--model", "scripted"]
        argv += ["--out", str(tmp_path), "--run-id", "r", "--no-plots", "--tasks", "mini_g1_*"]
        line = _json(capsys, [*argv, "--json"])
    assert isinstance(line, dict) and line["n"] == 0 and line["pass_rate"] is None
    assert main(["eval", str(tmp_path / "r"), "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "n/a" in out and "0.0% [" not in out


def test_runs_scored_under_different_protocols_never_pool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: two runs of one model and agent, one evaluated with ``--protocol toolbench``,
    became one row at the mean of their rates. Now each (protocol, judge) is its own row, and
    each row shows its run's own ``eval`` figure."""
    runs = tmp_path / "runs"
    plain = _run(runs, "plain")
    toolbench = _run(runs, "toolbench", "--seed", "1")
    capsys.readouterr()
    lines = {
        "default": _json(capsys, ["eval", str(plain), "--json", "--no-plots"]),
        "toolbench": _json(
            capsys,
            ["eval", str(toolbench), "--json", "--no-plots"]
            + ["--protocol", "toolbench", "--judge", "rules-judge"],
        ),
    }
    rows = _json(capsys, ["leaderboard", "--runs-dir", str(runs), "--json"])
    assert isinstance(rows, list) and len(rows) == 2
    by_protocol = {r["protocol"]: r for r in rows}
    assert by_protocol["toolbench"]["judge"] == "rules-judge"
    assert by_protocol["toolbench"]["judge_kind"] == "rules"
    assert by_protocol["default"]["judge"] is None
    for protocol, line in lines.items():
        assert isinstance(line, dict)
        _same_headline(by_protocol[protocol], line)


def test_identical_seeded_repeats_are_one_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: two identical seeded runs made a pass@2 (98.3% from copies of one sample). Now
    the repeat counts once, the row says so, and it shows the run's own figure; a run with
    another seed is a second sample and pass@k appears."""
    runs = tmp_path / "runs"
    first = _run(runs, "first")
    _run(runs, "again")
    capsys.readouterr()
    line = _json(capsys, ["eval", str(first), "--json", "--no-plots"])
    assert isinstance(line, dict)
    row = _row(capsys, "--runs-dir", str(runs))
    assert len(row["runs"]) == 2 and row["samples"] == 1 and len(row["repeats"]) == 1
    assert row["pass_at_k"] == {} and row["trials"] == 1
    _same_headline(row, line)
    assert main(["leaderboard", "--runs-dir", str(runs)]) == 0
    assert "1 sample" in capsys.readouterr().out

    _run(runs, "seed1", "--seed", "1")
    capsys.readouterr()
    row = _row(capsys, "--runs-dir", str(runs))
    assert row["samples"] == 2 and set(row["pass_at_k"]) == {"1", "2"}


def test_eval_reference_with_no_task_in_common_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: "57 wins / 1 losses, win rate 98.3%, McNemar p = 4.5e-13" from runs that share
    nothing. Now exit 2 with one line; runs that do share tasks are told how many."""
    runs = tmp_path / "runs"
    g1 = _run(runs, "g1", "--tasks", "mini_g1_*")
    g2 = _run(runs, "g2", "--tasks", "mini_g2_*", model="reference")
    both = _run(runs, "both", "--tasks", "mini_g*", model="explorer")
    capsys.readouterr()
    assert main(["eval", str(g1), "--reference", str(g2), "--no-plots"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "share no task" in err[0]
    assert "win rate" not in (g1 / "report.md").read_text()
    assert main(["eval", str(g1), "--reference", str(both), "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "2 task(s) shared with the reference both" in out

    assert main(["leaderboard", str(g1), "--reference", str(g2)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "shares no task" in err[0]
    rows = _json(capsys, ["leaderboard", str(g1), str(g2), "--reference", str(both), "--json"])
    assert isinstance(rows, list)
    assert {Path(r["keys"][0]).name: r["shared_tasks"] for r in rows if not r["is_reference"]} == {
        "g1": 2,
        "g2": 1,
    }


def test_compare_says_how_many_tasks_the_runs_share(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    g1 = _run(runs, "g1", "--tasks", "mini_g1_*")
    g2 = _run(runs, "g2", "--tasks", "mini_g2_*")
    both = _run(runs, "both", "--tasks", "mini_g*")
    capsys.readouterr()
    out = str(tmp_path / "cmp")
    assert main(["compare", "--runs", str(g1), str(g2), "--out", out]) == 2
    assert "no task id in common" in capsys.readouterr().err
    line = _json(capsys, ["compare", "--runs", str(both), str(g1), "--out", out, "--json"])
    assert isinstance(line, dict) and line["shared_tasks"] == 2


def test_eval_no_plots_removes_the_plots_of_the_previous_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``eval --no-plots`` left the PNGs of earlier scores, and the viewer showed them
    beside other figures."""
    run = _run(tmp_path / "runs", "r")
    assert main(["eval", str(run)]) == 0
    assert (run / "pass_rate.png").is_file()
    client = TestClient(create_app(tmp_path / "runs"))
    assert client.get("/api/runs/r").json()["plots"]
    assert main(["eval", str(run), "--no-plots"]) == 0
    assert not list(run.glob("*.png"))
    assert client.get("/api/runs/r").json()["plots"] == []


def test_a_leaderboard_reference_on_another_suite_version_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rows of another suite version get no win rate, and a warning names both fingerprints."""
    runs = tmp_path / "runs"
    run = _run(runs, "r")
    reference = _run(runs, "ref", model="reference")
    suite = tmp_path / "mini-v2"
    shutil.copytree(MINI, suite)
    (suite / "suite.yaml").write_text((MINI / "suite.yaml").read_text() + "\n# edited\n")
    argv = ["run", "--suite", str(suite), "--agent", "react", "--model", "reference"]
    assert main([*argv, "--out", str(tmp_path / "other"), "--run-id", "v2", "--no-plots"]) == 0
    capsys.readouterr()
    v2 = tmp_path / "other" / "v2"
    rows = _json(
        capsys, ["leaderboard", str(run), str(v2), "--reference", str(reference), "--json"]
    )
    assert isinstance(rows, list)
    by_key = {Path(r["keys"][0]).name: r for r in rows}
    assert by_key["r"]["win_rate"] is not None and by_key["r"]["shared_tasks"] == 4
    assert by_key["v2"]["win_rate"] is None
    assert main(["leaderboard", str(run), str(v2), "--reference", str(reference)]) == 0
    err = capsys.readouterr().err
    fingerprints = {
        json.loads((path / "manifest.json").read_text())["suite"]["fingerprint"]
        for path in (run, v2)
    }
    assert len(fingerprints) == 2
    warning = next(line for line in err.splitlines() if line.startswith("warning:"))
    assert "no win rate" in warning
    assert all(fp.removeprefix("sha256:")[:12] in warning for fp in fingerprints)
    assert main(["eval", str(run), "--reference", str(v2), "--no-plots"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the console wraps long lines
    assert "warning: the reference v2 ran on suite mini" in out
    assert all(fp.removeprefix("sha256:")[:12] in out for fp in fingerprints)


def test_after_make_compare_every_command_shows_each_runs_eval_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's "done when": for every run ``make compare`` leaves under ``runs/``, the
    leaderboard's pass rate, n and interval equal ``eval``'s, and the viewer (its HTTP API: the
    index, the run page and its leaderboard) shows the same."""
    runs = tmp_path / "runs"
    argv = [
        "compare",
        "--agents",
        "react,dfsdt,react@4",
        "--suite",
        str(ROOT / "scenarios/default"),
    ]
    assert main([*argv, "--model", "noisy-reference", "--seed", "0", "--out", str(runs)]) == 0
    capsys.readouterr()
    folders = sorted(p.parent for p in runs.rglob("manifest.json"))
    assert len(folders) == 3
    board = _json(capsys, ["leaderboard", "--runs-dir", str(runs), "--json"])
    assert isinstance(board, list) and len(board) == 3
    client = TestClient(create_app(runs))
    index = {r["key"]: r for r in client.get("/api/runs").json()}
    shown = client.get("/api/leaderboard").json()["rows"]
    (comparison,) = [json.loads(f.read_text()) for f in runs.rglob("comparison.json")]
    compared = {
        Path(s["run"]).resolve(): s["summary"]["pass_rate"] for s in comparison["strategies"]
    }
    for folder in folders:
        line = _json(capsys, ["eval", str(folder), "--json", "--no-plots"])
        assert isinstance(line, dict) and line["n"] == 58
        shown_by_compare = compared[folder.resolve()]
        assert (shown_by_compare["value"], shown_by_compare["n"]) == (
            pytest.approx(line["pass_rate"]),
            line["n"],
        )
        assert [shown_by_compare["low"], shown_by_compare["high"]] == pytest.approx(
            line["pass_rate_ci"]
        )
        (row,) = [r for r in board if r["runs"] == [str(folder)]]
        _same_headline(row, line)
        key = folder.relative_to(runs).as_posix()
        head = index[key]["headline"]
        assert head == client.get(f"/api/runs/{key}").json()["entry"]["headline"]
        (viewed,) = [r for r in shown if r["keys"] == [key]]
        assert viewed["headline"] == row["headline"] == head
        assert (head["pass_rate"], head["n"]) == (pytest.approx(line["pass_rate"]), line["n"])
        assert [head["low"], head["high"]] == pytest.approx(line["pass_rate_ci"])


TINYWORLD = ROOT / "tests" / "fixtures" / "suites" / "tinyworld"


def _figures(rate: dict) -> tuple[float, ...]:
    """A state check's figures as scores.json, comparison.json, the leaderboard and the viewer
    hold them (a ``CheckRate``), flat: episodes, passed, the rate and its interval, then each
    k's pass@k and pass^k with theirs."""
    out = [rate["episodes"], rate["passed"]]
    for iv in [rate["rate"]] + [
        r[k] for k in sorted(rate["pass_at_k"]) for r in (rate["pass_at_k"], rate["pass_hat_k"])
    ]:
        out += [iv["value"], iv["low"], iv["high"]]
    return tuple(out)


def _same_figures(got: list[dict], expected: dict[str, tuple[float, ...]]) -> None:
    assert [r["check"] for r in got] == list(expected)
    for r in got:
        assert _figures(r) == pytest.approx(expected[r["check"]], abs=1e-6)  # scores.json: 6 places


def test_every_command_shows_each_state_check_as_eval_computes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 35 item 10: in a world, ``sandbox eval`` (scores.json, report.md, --json),
    ``sandbox compare`` (comparison.json, its report, --json), the leaderboard (--json, --md)
    and the viewer (run page, leaderboard) give each state check the same figures: how many
    episodes passed it, its rate with the interval, pass@k and pass^k with theirs."""
    runs = tmp_path / "runs"
    argv = ["compare", "--agents", "react,dfsdt", "--suite", str(TINYWORLD), "--trials", "3"]
    argv += ["--model", "noisy-reference:0.5", "--seed", "0", "--out", str(runs), "--no-plots"]
    argv += [
        "--tasks",
        "pay_bob,unfreeze_and_pay,balance",
    ]  # the conversations' own test their turns
    compared_line = _json(capsys, [*argv, "--json"])
    assert isinstance(compared_line, dict)
    (comparison_file,) = runs.rglob("comparison.json")
    comparison = json.loads(comparison_file.read_text())
    compare_report = (comparison_file.parent / "report.md").read_text()
    board = _json(capsys, ["leaderboard", "--runs-dir", str(runs), "--json"])
    assert isinstance(board, list) and len(board) == 2
    assert main(["leaderboard", "--runs-dir", str(runs), "--md"]) == 0
    board_md = capsys.readouterr().out
    client = TestClient(create_app(runs))
    shown_board = client.get("/api/leaderboard").json()["rows"]
    seen_passed = set()
    for strategy in comparison["strategies"]:
        folder = Path(strategy["run"])
        line = _json(capsys, ["eval", str(folder), "--json", "--no-plots"])
        assert isinstance(line, dict)
        scores = json.loads((folder / "scores.json").read_text())
        checks = scores["state_checks"]
        rates = [checks["all"], *checks["checks"]]
        assert [r["check"] for r in rates] == [
            "all",
            "gold",
            "assert",
            "forbid_state",
            "forbid_action",
        ]
        assert all(r["episodes"] == 9 for r in rates[:2]) and set(rates[0]["pass_at_k"]) == {
            "1",
            "2",
            "3",
        }
        expected = {r["check"]: _figures(r) for r in rates}
        seen_passed.add(checks["all"]["passed"])
        # eval --json
        assert {c: (v["episodes"], v["passed"]) for c, v in line["state_checks"].items()} == {
            c: f[:2] for c, f in expected.items()
        }
        for c, v in line["state_checks"].items():
            assert (v["rate"], *v["rate_ci"]) == pytest.approx(expected[c][2:5])
            hats = [
                rate["pass_hat_k"][k]["value"]
                for rate in rates
                if rate["check"] == c
                for k in "123"
            ]
            assert [v["pass_hat_k"][k] for k in "123"] == pytest.approx(hats)
        # sandbox compare: comparison.json, its --json line, its report
        by_compare = strategy["state_checks"]
        _same_figures([by_compare["all"], *by_compare["checks"]], expected)
        assert by_compare["tasks"] == checks["tasks"]
        name = strategy["name"]
        for c, v in compared_line["state_checks"][name].items():
            assert (v["episodes"], v["passed"]) == expected[c][:2]
        # the leaderboard, as --json, --md and in the viewer
        (row,) = [r for r in board if r["runs"] == [str(folder)]]
        _same_figures(row["state_checks"], expected)
        (viewed,) = [r for r in shown_board if r["runs"] == [str(folder)]]
        assert viewed["state_checks"] == row["state_checks"]
        # the viewer's run page
        key = folder.relative_to(runs).as_posix()
        page = client.get(f"/api/runs/{key}").json()
        assert page["scores"]["state_checks"] == checks
        # report.md (eval's) and the compare report and leaderboard --md: the same cells
        report = (folder / "report.md").read_text()
        for r in rates:
            iv = r["rate"]
            cell = f"{100 * iv['value']:.1f}% [{100 * iv['low']:.1f}, {100 * iv['high']:.1f}]"
            hat = r["pass_hat_k"]["3"]["value"]
            assert (
                f"| {r['check']} | {r['tasks']} | {r['episodes']} | {r['passed']} | {cell} |"
                in (report)
            )
            assert f"{cell} ({r['passed']}/{r['episodes']}); pass^3 {100 * hat:.1f}%" in (
                compare_report
            )
            assert f"{cell} ({r['passed']}/{r['episodes']}); pass^3 {100 * hat:.1f}%" in board_md
    assert len(seen_passed) == 2  # the two strategies differ: nothing above compared equal zeros


def test_user_failures_are_left_out_and_counted_alike_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A conversation whose user model answers nothing is the user's failure: ``run``, ``eval``
    (its JSON line, ``scores.json``, ``report.md``; the ``toolbench`` protocol too), ``compare``
    (its table, ``comparison.json``, its report) and the leaderboard (its rows, the markdown,
    the viewer's API) each leave it out of the pass rate and count it, 1 of the run's 2."""
    suite = Path(shutil.copytree(TINYWORLD, tmp_path / "bank"))
    runs = tmp_path / "runs"
    lines = {}
    with ScriptedOpenAIServer() as server:
        server.default = text_reply("")  # the user answers nothing: a user failure (empty)
        for agent in ("react", "dfsdt"):
            argv = ["run", "--suite", str(suite), "--tasks", "chat_*", "--agent", agent]
            argv += ["--model", "reference", "--user-model", f"openai:u@{server.base_url}"]
            argv += ["--out", str(runs), "--no-plots", "--run-id"]
            lines[agent] = _json(capsys, [*argv, agent, "--json"])
            assert main([*argv, f"{agent}-shown"]) == 0
            assert "infra errors 0  user failures 1" in capsys.readouterr().out
    for agent, line in lines.items():
        assert isinstance(line, dict) and line["user_failures"] == 1 and line["n"] == 1
        shutil.rmtree(runs / f"{agent}-shown")
    react = runs / "react"
    evaluated = _json(capsys, ["eval", str(react), "--json", "--no-plots"])
    assert isinstance(evaluated, dict)
    assert evaluated["excluded"] == {"user": 1} and evaluated["user_failures"] == 1
    assert evaluated["n"] == 1 and evaluated["pass_rate"] == 1.0
    scores = json.loads((react / "scores.json").read_text())
    assert scores["pass_rate"]["user_failures"] == 1 and scores["pass_rate"]["infra_errors"] == 0
    report = (react / "report.md").read_text()
    assert "## Users (not the agent's)" in report
    assert "their conversation's user: 1 (empty 1): chat_freeze_which." in report

    out = str(tmp_path / "cmp")
    capsys.readouterr()
    assert main(["compare", "--runs", str(react), str(runs / "dfsdt"), "--out", out]) == 0
    table = capsys.readouterr().out
    assert "user failures" in table
    (comparison,) = [json.loads(f.read_text()) for f in Path(out).rglob("comparison.json")]
    assert [s["summary"]["user_failures"] for s in comparison["strategies"]] == [1, 1]
    assert [s["summary"]["n"] for s in comparison["strategies"]] == [1, 1]
    (compared,) = list(Path(out).rglob("report.md"))
    assert "| infra errors | user failures |" in compared.read_text()
    rows_shown = [ln for ln in compared.read_text().splitlines() if ln.startswith("| react | 1 |")]
    assert len(rows_shown) == 1 and rows_shown[0].endswith("| 0 | 1 |")

    rows = _json(capsys, ["leaderboard", "--runs-dir", str(runs), "--json"])
    assert isinstance(rows, list) and len(rows) == 2
    for row in rows:
        assert (row["user_failures"], row["infra_errors"]) == (1, 0)
        assert row["excluded"] == {"user": 1}
    (row,) = [r for r in rows if r["agent"] == "react"]
    _same_headline(row, evaluated)
    assert main(["leaderboard", "--runs-dir", str(runs), "--md"]) == 0
    md = capsys.readouterr().out
    assert "| infra errors | user failures |" in md and "failures of a conversation's user" in md
    assert main(["leaderboard", "--runs-dir", str(runs)]) == 0
    assert "left out: #1 user 1, #2 user 1" in " ".join(capsys.readouterr().out.split())
    shown = TestClient(create_app(runs)).get("/api/leaderboard").json()["rows"]
    assert sorted(r["user_failures"] for r in shown) == [1, 1]

    judged = ["--protocol", "toolbench", "--judge", "rules-judge", "--json", "--no-plots"]
    toolbench = _json(capsys, ["eval", str(react), *judged])
    assert isinstance(toolbench, dict)
    assert toolbench["excluded"] == {"user": 1} and toolbench["user_failures"] == 1
