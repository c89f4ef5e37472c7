"""What the second hostile trial found beyond the issue's list (hardening round two, the closing
trial): each a defect on the branch before it was fixed, one test each."""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.errors import ModelError
from agents.model import Message
from agents.models.openai_compat import OpenAICompatModel
from agents.models.retry import RetryPolicy
from sandbox.cli import main
from sandbox.models.specs import resolve_model
from sandbox.store.run_store import write_atomic
from tests.agents.models.openai_server import ScriptedOpenAIServer, raw_reply, text_reply
from tests.hostile.conftest import MINI
from tests.hostile.raw_endpoint import head, raw_endpoint
from tests.hostile.test_one_line_errors import cli
from tests.hostile.test_run_records import make_run, one_error_line

RUN = ["run", "--suite", str(MINI), "--model", "reference", "--no-plots"]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("recorded"))


def test_an_output_folder_in_a_symlink_loop_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    code, err = cli([*RUN, "--out", str(tmp_path / "a")], capsys)
    assert code == 1 and "cannot use the output folder" in one_error_line(err)


@pytest.mark.parametrize("kind", ["device", "fifo", "too large"])
def test_a_system_prompt_file_that_never_ends_or_is_huge_is_refused_unread(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """/dev/zero was read until memory ran out; a 133 MB prompt went into the manifest."""
    path = {"device": Path("/dev/zero"), "fifo": tmp_path / "fifo", "too large": tmp_path / "p"}
    if kind == "fifo":
        os.mkfifo(path[kind])
    if kind == "too large":
        path[kind].write_text("x" * (2**20 + 1))
    code, err = cli(
        [*RUN, "--out", str(tmp_path / "runs"), "--system-prompt-file", str(path[kind])], capsys
    )
    line = one_error_line(err)
    assert code == 2 and ("not a regular file" in line or "over 1048576 bytes" in line)


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://[::1", "is no URL (Invalid IPv6 URL)"),
        ("http://h:99999/v1", "is no URL (Port out of range"),
        ("ftp://host/v1", "is no http(s) URL"),
    ],
)
def test_a_model_url_that_is_none_is_one_line(
    url: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first two ended in ValueError tracebacks."""
    argv = ["run", "--suite", str(MINI), "--out", str(tmp_path), "--model", f"openai:m@{url}"]
    code, err = cli(argv, capsys)
    assert code == 2 and said in one_error_line(err)


def test_an_unreachable_model_is_one_error_line_and_one_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "--suite", str(MINI), "--out", str(tmp_path)]
    code, err = cli([*argv, "--model", "openai:m@http://127.0.0.1:1/v1"], capsys)
    shown = err.strip().splitlines()
    assert code == 2 and shown[0].startswith("error: ") and len(shown) == 2, err


def test_writers_of_one_file_at_once_never_trip_over_a_shared_temporary_file(
    tmp_path: Path,
) -> None:
    """Four `sandbox eval` of one run at once failed with "cannot write scores.json": they
    shared one temporary file."""
    target = tmp_path / "scores.json"
    failures: list[BaseException] = []

    def write(n: int) -> None:
        for i in range(40):
            try:
                write_atomic(target, json.dumps({"writer": n, "round": i}) + "\n")
            except BaseException as e:  # noqa: BLE001  (collected, asserted below)
                failures.append(e)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == [] and json.loads(target.read_text())["round"] == 39
    assert [p.name for p in tmp_path.iterdir()] == ["scores.json"]


def test_exports_replace_a_symlink_in_their_folder_instead_of_writing_through_it(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    out = tmp_path / "answers"
    out.mkdir()
    (out / "toolbench.json").symlink_to(victim)
    assert main(["export", "toolbench", str(recorded), str(out)]) == 0
    assert victim.read_text() == "keep" and not (out / "toolbench.json").is_symlink()
    assert json.loads((out / "toolbench.json").read_text())


def test_view_export_never_removes_a_folder_holding_anything_but_an_export(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder with a runs.json and the user's own files was removed whole."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "runs.json").write_text("[]")
    (site / "notes.txt").write_text("mine")
    code, err = cli(["view", "--export", str(site), str(recorded)], capsys)
    assert code == 2 and "holds notes.txt" in one_error_line(err)
    assert (site / "notes.txt").read_text() == "mine"
    shutil.rmtree(site)
    assert main(["view", "--export", str(site), str(recorded)]) == 0
    assert main(["view", "--export", str(site), str(recorded)]) == 0  # an earlier export: redone


def test_a_trajectories_file_that_is_a_device_is_refused_unread(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A link to /dev/zero was read until memory ran out."""
    run = tmp_path / "run"
    shutil.copytree(recorded, run)
    (run / "trajectories.jsonl").unlink()
    (run / "trajectories.jsonl").symlink_to("/dev/zero")
    code, err = cli(["eval", str(run)], capsys)
    assert code == 1 and "not a regular file" in one_error_line(err)


def test_a_run_cut_short_replays_the_episodes_it_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run missing trial 1 of a task whose trial 0 it holds stopped the whole replay with
    "has no trajectory for task ... trial 1"."""
    out = tmp_path / "runs"
    assert main([*RUN, "--out", str(out), "--run-id", "r", "--trials", "2"]) == 0
    file = out / "r" / "trajectories.jsonl"
    file.write_text("".join(file.read_text().splitlines(keepends=True)[:-1]))
    capsys.readouterr()
    assert main(["replay", str(out / "r"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["episodes"], report["divergent"], len(report["unrecorded"])) == (7, 0, 1)


def test_a_reply_with_an_unpaired_surrogate_is_sent_on_and_read_back(tmp_path: Path) -> None:
    """The next request could not be encoded (the episode crashed), and the line that kept the
    text escaped could not be read back by any reader."""
    reply = text_reply("half a pair: ")
    reply.body["choices"][0]["message"]["content"] += "\udcff"
    escaped = json.dumps(reply.body)  # ASCII, the surrogate as its escape, as a server sends it
    with ScriptedOpenAIServer() as server:
        server.default = lambda body: raw_reply(escaped, content_type="application/json")
        argv = ["run", "--suite", str(MINI), "--model", f"openai:m@{server.base_url}"]
        argv += ["--tasks", "mini_u_refund", "--max-model-calls", "2", "--out", str(tmp_path)]
        assert main([*argv, "--run-id", "r", "--no-plots"]) == 0
        assert len(server.requests) == 2
        assert "\ufffd" in json.dumps(server.requests[1]["messages"], ensure_ascii=False)
    assert main(["eval", str(tmp_path / "r"), "--no-plots"]) == 0
    assert main(["replay", str(tmp_path / "r")]) == 0


def test_a_run_outlives_a_change_of_its_system_prompt_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run whose prompt file changed (or grew past the limit) afterwards could no longer be
    read: its manifest re-read the file."""
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("You solve tasks with tools.")
    out = tmp_path / "runs"
    assert (
        main([*RUN, "--out", str(out), "--run-id", "r", "--system-prompt-file", str(prompt)]) == 0
    )
    prompt.write_text("Another prompt.")
    assert main(["eval", str(out / "r"), "--no-plots"]) == 0


def test_a_piped_leaderboard_with_many_columns_keeps_every_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Past 140 columns the model and rank columns were squeezed to nothing."""
    out = tmp_path / "runs"
    assert main([*RUN, "--out", str(out), "--run-id", "r", "--trials", "5"]) == 0
    capsys.readouterr()
    assert main(["leaderboard", str(out / "r")]) == 0
    table = capsys.readouterr().out
    row = next(line for line in table.splitlines() if "react" in line)
    assert "reference" in row and "│ 1 │" in row


@pytest.mark.parametrize("kind", ["config", "models file"])
@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_a_config_or_models_file_that_never_ends_is_refused_unread(
    kind: str, special: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--config /dev/zero` (and SANDBOX_MODELS_FILE=/dev/zero) were read until memory ran out;
    a FIFO blocked the command for good."""
    path = special
    if special == "fifo":
        path = str(tmp_path / "fifo")
        os.mkfifo(path)
    argv = [*RUN, "--out", str(tmp_path / "runs")]
    if kind == "config":
        code, err = cli([*argv, "--config", path], capsys)
    else:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("SANDBOX_MODELS_FILE", path)
            code, err = cli(argv, capsys)
    assert code == 2 and f"{path} is not a regular file" in one_error_line(err)


def test_a_run_of_a_billion_trials_is_refused_before_it_is_planned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--trials 1000000000` built a plan of 4e9 episodes in memory (MemoryError, or the machine
    out of memory)."""
    argv = [*RUN, "--out", str(tmp_path / "runs"), "--trials", "1000000000"]
    code, err = cli(argv, capsys)
    assert code == 2 and "over the 1000000 a run may hold (MAX_EPISODES)" in one_error_line(err)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


@pytest.fixture
def trickling() -> Iterator[str]:
    """An endpoint that sends its reply's headers, then its body a byte every 0.5 s."""
    body = json.dumps({"choices": [{"message": {"role": "assistant", "content": "hi"}}]})

    def answer(conn: socket.socket, request: bytes) -> None:
        conn.sendall(head(len(body)))
        for byte in body.encode():
            conn.sendall(bytes([byte]))
            time.sleep(0.5)

    with raw_endpoint(answer) as base_url:
        yield base_url


async def test_a_reply_trickled_a_byte_at_a_time_times_out_on_the_whole_request(
    trickling: str,
) -> None:
    """With a 2 s timeout, a reply of 65 bytes sent a byte a second took 65 s: the client's
    timeout bounded each pause, never the request."""
    model = OpenAICompatModel(
        model="m", base_url=trickling, timeout=2.0, retry=RetryPolicy(max_retries=0)
    )
    started = time.monotonic()
    with pytest.raises(ModelError) as raised:
        await model.complete([Message(role="user", content="hello")], [])
    assert raised.value.kind == "timeout" and time.monotonic() - started < 6


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--agent-option", "x=" + "[" * 30_000 + "]" * 30_000),
        ("--task-setting", "mini_u_refund=" + '{"a":' * 20_000 + "1" + "}" * 20_000),
    ],
)
def test_a_key_value_flag_nested_too_deeply_is_one_line(
    flag: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """JSON nested 20,000 deep in a KEY=VALUE flag ended in a RecursionError traceback."""
    code, err = cli([*RUN, "--out", str(tmp_path), flag, value], capsys)
    assert code == 2 and "nested too deeply to read" in one_error_line(err)


@pytest.mark.parametrize("key", ["sk-secret\nmore", "sk-secret\udcff"])
def test_an_api_key_no_header_can_carry_is_one_line_that_never_shows_it(
    key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A key with a newline was printed in the error ("Illegal header value b'Bearer ...'"); one
    with a byte that is not UTF-8 (as the shell passes it) ended in a UnicodeEncodeError
    traceback."""
    with ScriptedOpenAIServer() as server, pytest.MonkeyPatch.context() as patch:
        patch.setenv("SANDBOX_API_KEY", key)
        argv = [*RUN[:-3], "--model", f"openai:m@{server.base_url}", "--out", str(tmp_path)]
        code, err = cli(argv, capsys)
    line = one_error_line(err)
    assert code == 2 and "SANDBOX_API_KEY holds a character" in line and "sk-secret" not in err


def test_an_api_key_keeps_working_with_the_newline_a_key_file_leaves() -> None:
    spec = resolve_model("openai:m@http://h/v1", env={"SANDBOX_API_KEY": "sk-secret\r\n"})
    assert spec.api_key == "sk-secret"


@pytest.mark.parametrize("inside", ["", "answers"])
def test_export_toolbench_never_writes_into_the_run_folder(
    inside: str, recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`export toolbench RUN RUN` wrote toolbench.json among the run's files (a test set named
    `manifest` would have replaced the manifest)."""
    run = tmp_path / "run"
    shutil.copytree(recorded, run)
    before = sorted(p.name for p in run.iterdir())
    code, err = cli(["export", "toolbench", str(run), str(run / inside)], capsys)
    assert code == 2 and "is inside the run folder" in one_error_line(err)
    assert sorted(p.name for p in run.iterdir()) == before
