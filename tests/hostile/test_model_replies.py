"""A model endpoint that floods: each reply is cut off at a named limit, and no trajectory line
outgrows its own (hardening round two, item 3)."""

from __future__ import annotations

import gzip
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.trajectory import Component, Node, Status, Trajectory
from sandbox.cli import main
from sandbox.errors import RunError
from sandbox.store import Manifest, RunConfig, RunStore, read_trajectories
from sandbox.store.manifest import SuiteInfo
from tests.agents.models.openai_server import ScriptedOpenAIServer, text_reply
from tests.hostile.conftest import MINI
from tests.hostile.raw_endpoint import MODELS_LIST, head, is_models, raw_endpoint

FLOOD = 3_000_000
"""Bytes of text in each reply of the flooding endpoints (the trial's endpoint sent 3 MB)."""


def _run(base_url: str, out: Path, *extra: str) -> Trajectory:
    argv = ["run", "--suite", str(MINI), "--model", f"openai:flood@{base_url}", "--agent", "react"]
    argv += ["--tasks", "mini_u_refund", "--out", str(out), "--run-id", "r", "--no-plots"]
    assert main([*argv, "--max-model-calls", "3", *extra]) == 0
    (traj,) = read_trajectories(out / "r")
    return traj


def test_24_a_reply_over_the_cap_ends_the_episode_named_and_small(tmp_path: Path) -> None:
    """On main the three 3 MB replies were all taken: a ~9 MB trajectory line, budget spent.
    A reply over the cap is what the model sent: the episode is counted unsolved (a model that
    floods is not left out of the pass rate) and ``--resume`` does not ask for it again."""
    with ScriptedOpenAIServer() as server:
        server.default = lambda body: text_reply("x" * FLOOD)
        traj = _run(server.base_url, tmp_path)
        assert len(server.requests) == 1  # not retried, not asked again
        assert main(["run", "--resume", str(tmp_path / "r"), "--no-plots"]) == 0
        assert len(server.requests) == 1  # a finished episode: resume sends nothing
    assert traj.end_reason == "model_error:reply_too_large"
    assert traj.status is Status.error and not traj.infra_error
    assert [e.kind for e in traj.errors] == ["agent"]
    assert "over the limit of 262144 bytes" in (traj.nodes[-1].error or "")
    assert (tmp_path / "r" / "trajectories.jsonl").stat().st_size < 50_000
    scores = json.loads((tmp_path / "r" / "scores.json").read_text())
    (label,) = scores["labels"]
    assert label["label"] == "unsolved" and label["excluded"] is None
    assert scores["infra"]["errors"] == 0 and scores["pass_rate"]["n"] == 1


def test_24_the_cap_is_a_setting(tmp_path: Path) -> None:
    with ScriptedOpenAIServer() as server:
        server.default = lambda body: text_reply("x" * 1000)
        assert _run(server.base_url, tmp_path / "a", "--max-reply-bytes", "600").end_reason == (
            "model_error:reply_too_large"
        )
        taken = _run(server.base_url, tmp_path / "b", "--max-reply-bytes", "4000")
    assert taken.end_reason != "model_error:reply_too_large" and taken.nodes[0].content


@pytest.fixture
def endless_chunks() -> Iterator[tuple[str, list[int]]]:
    """An endpoint that answers every completion with a chunked body (no length) that never
    ends well: 64 KiB chunks up to 30 MB. Yields its base URL and the bytes it managed to send
    per response (the client hanging up stops it)."""
    sent: list[int] = []

    def answer(conn: socket.socket, request: bytes) -> None:
        if is_models(request):
            conn.sendall(head(len(MODELS_LIST)) + MODELS_LIST)
            return
        conn.sendall(head())
        total, chunk = 0, b'{"choices": [{"message": {"content": "' + b"y" * 65536
        try:
            while total < 30_000_000:
                conn.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                total += len(chunk)
                chunk = b"y" * 65536
        finally:
            sent.append(total)

    with raw_endpoint(answer) as base_url:
        yield base_url, sent


def test_24_a_reply_without_a_length_is_cut_off_while_it_is_read(
    endless_chunks: tuple[str, list[int]], tmp_path: Path
) -> None:
    base_url, sent = endless_chunks
    traj = _run(base_url, tmp_path)
    assert traj.end_reason == "model_error:reply_too_large"
    assert "more than 262144 bytes" in (traj.nodes[-1].error or "")
    assert sent and max(sent) < 30_000_000  # the client hung up before the end


def _store(tmp_path: Path) -> RunStore:
    manifest = Manifest(run_id="r", config=RunConfig(), suite=SuiteInfo(name="s"))
    return RunStore.create(tmp_path, manifest)


def test_24_an_episode_over_the_line_limit_is_stored_without_its_steps(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.max_line = 5_000  # the limit (64 MiB) made small for the test
    big = Trajectory(
        scenario_id="t",
        agent=Component(name="react"),
        model=Component(name="m"),
        status=Status.answered,
        final_answer="done",
        nodes=[
            Node(id=i, parent=i - 1 if i else None, kind="thought", content="z" * 500)
            for i in range(20)
        ],
        chosen_path=list(range(20)),
    )
    store.append(big)
    store.release()
    (kept,) = read_trajectories(store.path)
    assert (kept.status, kept.end_reason, kept.nodes) == (Status.error, "trajectory_too_large", [])
    assert kept.final_answer == "done" and "over the limit of 5000" in kept.errors[0].message
    with pytest.raises(RunError, match=r"trajectories.jsonl:1: a line of \d+ bytes, over the 100"):
        read_trajectories(store.path, max_line=100)


@pytest.fixture
def compressed_flood() -> Iterator[str]:
    """An endpoint whose completion is 3 MB of text sent gzipped (a few KB on the wire), even
    though the client asks for no compression."""
    text = json.dumps({"choices": [{"message": {"role": "assistant", "content": "z" * FLOOD}}]})
    body = gzip.compress(text.encode(), 9)

    def answer(conn: socket.socket, request: bytes) -> None:
        if is_models(request):
            conn.sendall(head(len(MODELS_LIST)) + MODELS_LIST)
        else:
            conn.sendall(head(len(body), b"Content-Encoding: gzip\r\n") + body)

    with raw_endpoint(answer) as base_url:
        yield base_url


def test_24_a_compressed_reply_is_counted_as_it_inflates(
    compressed_flood: str, tmp_path: Path
) -> None:
    traj = _run(compressed_flood, tmp_path)
    assert traj.end_reason == "model_error:reply_too_large"
