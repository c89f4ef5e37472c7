"""Managed local endpoints: the command lines, readiness, stopping (SIGTERM, then SIGKILL), the
errors of a server that cannot start, and a run that launches, uses and stops its server.

The servers are ``fake_model_server.py`` (beside this file) installed as an executable, so the
launcher starts them exactly as it starts a real one; nothing here needs vLLM or llama.cpp.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agents.errors import ModelError
from sandbox.errors import ModelUnreachableError
from sandbox.models import resolve_model
from sandbox.models.launch import (
    LaunchSpec,
    find_gguf,
    hand_command,
    missing_launcher,
    server_command,
)
from sandbox.models.managed import ManagedModel, is_loopback
from sandbox.models.remote import endpoint_client, openai_client
from sandbox.models.server_process import LaunchedServer, free_port
from sandbox.run.episode import model_budget
from tests.process_checks import wait_gone

FAKE = Path(__file__).with_name("fake_model_server.py")
ROOT = Path(__file__).resolve().parents[2]
QWEN_ARGS = ["--enable-auto-tool-choice", "--tool-call-parser", "hermes"]


def install_fake(folder: Path, name: str = "vllm") -> Path:
    """The fake server as an executable called ``name`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / name
    exe.write_text(f"#!{sys.executable}\n" + FAKE.read_text(encoding="utf-8"))
    exe.chmod(0o755)
    return exe


def read_record(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture
def fake_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A record file the fake servers started by this test write to."""
    record = tmp_path / "record.jsonl"
    monkeypatch.setenv("FAKE_SERVER_RECORD", str(record))
    return record


# -- the command lines ---------------------------------------------------------------------------


def test_qwen_7b_launches_vllm_with_hermes_tool_calls_on_the_given_port() -> None:
    spec = resolve_model("qwen-7b")
    assert spec.launch is not None and spec.launch.server == "vllm"
    argv = server_command(spec.launch, spec.model or "", "127.0.0.1", 8123)
    assert argv == [
        "vllm",
        "serve",
        "Qwen/Qwen2.5-7B-Instruct",
        *QWEN_ARGS,
        "--host",
        "127.0.0.1",
        "--port",
        "8123",
    ]


def test_sglang_and_a_local_model_path_name_the_served_model() -> None:
    launch = LaunchSpec(server="sglang", model="/models/qwen", tool_parser="qwen25")
    argv = server_command(launch, "qwen", "127.0.0.1", 30000)
    assert argv[1:5] == ["-m", "sglang.launch_server", "--model-path", "/models/qwen"]
    assert argv[5:] == [
        "--tool-call-parser",
        "qwen25",
        "--served-model-name",
        "qwen",
        "--host",
        "127.0.0.1",
        "--port",
        "30000",
    ]


def test_llamacpp_finds_its_gguf_inside_a_package_without_importing_it(tmp_path: Path) -> None:
    package = tmp_path / "gguf_holder_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("raise RuntimeError('imported')\n")
    (package / "m.gguf").write_bytes(b"GGUF")
    sys.path.insert(0, str(tmp_path))
    try:
        assert find_gguf("gguf_holder_pkg:m.gguf") == package / "m.gguf"
        launch = LaunchSpec(server="llamacpp", gguf="gguf_holder_pkg:m.gguf", context=4096)
        argv = server_command(launch, "small", "127.0.0.1", 9)
    finally:
        sys.path.remove(str(tmp_path))
    assert argv[:3] == [sys.executable, "-m", "sandbox.models.llamacpp_server"]
    assert argv[3:] == [
        "--model",
        str(package / "m.gguf"),
        "--model_alias",
        "small",
        "--host",
        "127.0.0.1",
        "--port",
        "9",
        "--n_ctx",
        "4096",
    ]
    assert "gguf_holder_pkg" not in sys.modules


def test_a_missing_gguf_package_names_the_extra_and_a_placeholder_command() -> None:
    launch = LaunchSpec(server="llamacpp", gguf="no_such_gguf_pkg:m.gguf")
    with pytest.raises(ModelUnreachableError, match="no_such_gguf_pkg .* is not installed"):
        find_gguf(launch.gguf)
    missing = missing_launcher(launch)
    assert missing is not None and "install the 'local' extra" in missing
    assert "--model '<no_such_gguf_pkg:m.gguf>'" in hand_command(launch, "m", "127.0.0.1", 8080)


def test_a_launch_is_checked_when_the_alias_is_read(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs gguf"):
        LaunchSpec(server="llamacpp")
    with pytest.raises(ValueError, match="gguf: is for llamacpp"):
        LaunchSpec(server="vllm", gguf="x.gguf")


def test_loopback_urls() -> None:
    assert is_loopback("http://localhost:8000/v1") and is_loopback("http://127.0.0.2:1/v1")
    assert is_loopback("http://[::1]:8000/v1")
    assert not is_loopback("http://gpu-box:8000/v1") and not is_loopback(None)


def test_the_alias_wall_clock_default_applies_only_where_the_run_sets_none() -> None:
    from agents.budget import Budget

    spec = resolve_model("smollm2-135m")
    assert spec.max_seconds is not None
    assert model_budget(Budget(), spec).max_seconds == spec.max_seconds
    assert model_budget(Budget(max_seconds=5), spec).max_seconds == 5
    assert model_budget(Budget(), resolve_model("reference")).max_seconds is None


# -- starting and stopping -----------------------------------------------------------------------


def _fake_server(tmp_path: Path, *, grace: float = 5.0, timeout: float = 20.0) -> LaunchedServer:
    exe = install_fake(tmp_path / "bin", "fake-server")
    return LaunchedServer(
        lambda host, port: [str(exe), "serve", "m", "--host", host, "--port", str(port)],
        name="fake",
        label="fake server",
        start_timeout=timeout,
        stop_grace=grace,
    )


async def test_a_server_that_ignores_sigterm_is_killed_after_the_grace_period(
    tmp_path: Path, fake_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_SERVER_IGNORE_TERM", "1")
    server = _fake_server(tmp_path, grace=1.0)
    url = await server.start()
    assert url == server.base_url and server.pid is not None
    started = time.monotonic()
    await server.stop()
    took = time.monotonic() - started
    assert wait_gone(server.pid, 2.0), "the server outlived stop()"
    assert {"signal": signal.SIGTERM} in read_record(fake_env)  # asked first, then killed
    # it waited out the grace period; the upper bound only says stop() does not hang (a tight
    # one flakes on a loaded machine)
    assert 1.0 <= took < 30.0


async def test_a_child_the_server_started_in_a_session_of_its_own_is_stopped_with_it(
    tmp_path: Path, fake_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon of the server's (a new session, its parent gone) does not outlive the server
    (issue 40 item 3): the guard adopts it and stops it with the rest."""
    pidfile = tmp_path / "daemon.pid"
    monkeypatch.setenv("FAKE_SERVER_DAEMON", str(pidfile))
    server = _fake_server(tmp_path, grace=1.0)
    await server.start()
    daemon = int(pidfile.read_text())
    assert not wait_gone(daemon, 0.2)  # it runs beside the server, in a session of its own
    assert os.getsid(daemon) == daemon != os.getsid(server.pid or 0)
    await server.stop()
    assert wait_gone(daemon, 5.0), "the server's daemon outlived stop()"


async def test_a_server_that_honours_sigterm_stops_at_once(tmp_path: Path, fake_env: Path) -> None:
    server = _fake_server(tmp_path, grace=60.0)
    await server.start()
    started = time.monotonic()
    await server.stop()
    # it did not wait out the grace period (the bound is far from what a loaded machine takes)
    assert time.monotonic() - started < 60.0
    assert server.pid is not None and wait_gone(server.pid, 1.0)


async def test_readiness_waits_for_a_slow_server(
    tmp_path: Path, fake_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_SERVER_LISTEN_AFTER", "1.5")
    server = _fake_server(tmp_path)
    try:
        await server.start()
        assert server.started_seconds is not None and server.started_seconds >= 1.5
    finally:
        await server.stop()


async def test_a_server_that_exits_at_start_shows_its_output_and_leaves_nothing(
    tmp_path: Path, fake_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_SERVER_EXIT", "3")
    server = _fake_server(tmp_path)
    with pytest.raises(ModelUnreachableError) as e:
        await server.start()
    message = str(e.value)
    assert "exited with code 3 before it answered" in message
    assert "not enough memory for the model" in message  # the tail of its stderr


async def test_a_server_that_never_gets_ready_times_out_and_is_stopped(
    tmp_path: Path, fake_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_SERVER_NOT_READY", "1")
    server = _fake_server(tmp_path, timeout=1.0, grace=1.0)
    with pytest.raises(ModelUnreachableError, match=r"did not answer .*/v1/models within 1 s"):
        await server.start()
    pid = read_record(fake_env)[0]["pid"]
    assert wait_gone(pid, 3.0)


async def test_managed_model_uses_a_server_that_already_serves_it(
    tmp_path: Path, fake_env: Path
) -> None:
    hand = _fake_server(tmp_path)  # "started by hand": serves model "m"
    url = await hand.start()
    try:
        spec = resolve_model("qwen-7b").model_copy(update={"base_url": url, "model": "m"})
        model = openai_client(spec)
        assert isinstance(model, ManagedModel)
        assert await model.probe() == ["m"]
        assert model.server is None  # nothing launched
        await model.aclose()
    finally:
        await hand.stop()


async def test_managed_model_launches_when_another_model_answers_at_its_url(
    tmp_path: Path, fake_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hand = _fake_server(tmp_path)  # serves "m", not Qwen
    url = await hand.start()
    install_fake(tmp_path / "path")
    monkeypatch.setenv("PATH", f"{tmp_path / 'path'}{os.pathsep}{os.environ['PATH']}")
    spec = resolve_model("qwen-7b").model_copy(update={"base_url": url})
    model = ManagedModel(spec, lambda u: endpoint_client(spec, u))
    try:
        turn = await model.complete([{"role": "user", "content": "hi"}], [])
        assert turn.content == "A short answer."
        assert model.server is not None and model.server.base_url != url
    finally:
        await model.aclose()
        await hand.stop()


async def test_a_launcher_that_is_not_installed_names_the_extra_and_the_hand_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no vllm anywhere
    port = free_port()
    spec = resolve_model("qwen-7b", env={"SANDBOX_QWEN_7B_BASE_URL": f"http://127.0.0.1:{port}/v1"})
    model = openai_client(spec)
    with pytest.raises(ModelUnreachableError) as e:
        await model.probe()
    message = str(e.value)
    assert "\n" not in message
    assert "vLLM is not installed: install the 'vllm' extra" in message
    assert (
        "vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice --tool-call-parser "
        f"hermes --host 127.0.0.1 --port {port}" in message
    )
    with pytest.raises(ModelUnreachableError):  # the failure is kept: no second attempt
        await model.complete([], [])
    await model.aclose()


# -- a run through the command line --------------------------------------------------------------


def _sandbox(args: list[str], env: dict[str, str], **kwargs) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "sandbox.cli", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def _run_env(tmp_path: Path, record: Path, **extra: str) -> dict[str, str]:
    install_fake(tmp_path / "path")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SANDBOX_", "FAKE_"))}
    env |= {
        "PATH": f"{tmp_path / 'path'}{os.pathsep}{os.environ['PATH']}",
        "FAKE_SERVER_RECORD": str(record),
        # nothing answers there, so the run launches its own vLLM
        "SANDBOX_QWEN_7B_BASE_URL": f"http://127.0.0.1:{free_port()}/v1",
        "PYTHONPATH": str(ROOT),
        **extra,
    }
    return env


def test_run_with_qwen_7b_starts_vllm_waits_for_it_uses_it_and_stops_it(tmp_path: Path) -> None:
    """What `make run MODEL=qwen-7b` does on a GPU machine with vLLM, with a fake `vllm`."""
    record = tmp_path / "record.jsonl"
    env = _run_env(tmp_path, record, FAKE_SERVER_LISTEN_AFTER="1")
    args = ["run", "--model", "qwen-7b", "--agent", "react", "--tasks", "g1_flight_baggage"]
    proc = _sandbox([*args, "--out", str(tmp_path / "runs"), "--no-plots", "--json"], env)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-3000:]
    started, *rest = read_record(record)
    argv = started["argv"]
    assert argv[:5] == ["serve", "Qwen/Qwen2.5-7B-Instruct", *QWEN_ARGS]
    assert argv[5:8] == ["--host", "127.0.0.1", "--port"] and int(argv[8]) > 0
    assert len(argv) == 9
    requests = [r["request"] for r in rest if "request" in r]
    assert requests and all(r["model"] == "Qwen/Qwen2.5-7B-Instruct" for r in requests)
    assert {"signal": signal.SIGTERM} in rest  # stopped, politely
    assert wait_gone(started["pid"], 2.0)
    summary = json.loads(out.splitlines()[-1])
    assert summary["by_status"] == {"answered": 1} and summary["model_calls"] == 1
    manifest = json.loads(Path(summary["run"], "manifest.json").read_text())
    assert manifest["model"]["launch"]["server"] == "vllm"


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_a_run_stopped_by_a_signal_leaves_no_server(tmp_path: Path, how: signal.Signals) -> None:
    """Ctrl-C and SIGTERM stop the run, which stops its server; SIGKILL gives the run no say,
    and the guard stops the server when the run's end of its pipe closes."""
    record = tmp_path / "record.jsonl"
    env = _run_env(tmp_path, record, FAKE_SERVER_REPLY_DELAY="60")
    args = ["run", "--model", "qwen-7b", "--tasks", "g1_flight_baggage", "--no-plots"]
    proc = _sandbox([*args, "--out", str(tmp_path / "runs")], env)
    try:
        deadline = time.monotonic() + 60
        while not any("request" in r for r in read_record(record)):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr
            time.sleep(0.1)
        pid = read_record(record)[0]["pid"]
        proc.send_signal(how)
        proc.communicate(timeout=60)
        assert proc.returncode != 0
        assert wait_gone(pid, 10.0), f"the server outlived a run stopped by {how.name}"
    finally:
        if proc.poll() is None:
            proc.kill()


# -- sandbox launch: one server started by hand, shared by runs -----------------------------------


def test_launch_prints_the_command_on_the_alias_port() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SANDBOX_")}
    done = subprocess.run(
        [sys.executable, "-m", "sandbox.cli", "launch", "qwen-7b", "--print"],
        cwd=ROOT,
        env=env | {"PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice --tool-call-parser hermes "
        "--host 127.0.0.1 --port 8000"
    )


def test_launch_of_an_alias_without_launch_is_a_usage_error(tmp_path: Path) -> None:
    proc = _sandbox(["launch", "reference"], dict(os.environ, PYTHONPATH=str(ROOT)))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "has no launch:" in err


def test_runs_share_a_server_started_with_sandbox_launch(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    env = _run_env(tmp_path, record)
    port = env["SANDBOX_QWEN_7B_BASE_URL"].split(":")[-1].split("/")[0]
    server = _sandbox(["launch", "qwen-7b"], env)
    try:
        deadline = time.monotonic() + 30
        while not any("argv" in r for r in read_record(record)):
            assert server.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        assert read_record(record)[0]["argv"][-1] == port
        for k in range(2):
            args = ["run", "--model", "qwen-7b", "--tasks", "g1_flight_baggage", "--no-plots"]
            proc = _sandbox([*args, "--out", str(tmp_path / f"runs{k}")], env)
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err[-2000:]
        entries = read_record(record)
        assert sum("argv" in r for r in entries) == 1  # one server, started by hand
        assert sum("request" in r for r in entries) == 2  # both runs used it
        assert server.poll() is None  # and it outlives them
    finally:
        server.terminate()
        server.communicate(timeout=30)


async def test_a_single_slot_alias_sends_one_request_at_a_time() -> None:
    """The others wait in the client, so no request's timeout runs while it queues."""
    from tests.agents.models.openai_server import ScriptedOpenAIServer, slow, text_reply

    with ScriptedOpenAIServer(models=["SmolLM2-135M-Instruct"]) as server:
        server.push(slow(text_reply("first"), 0.4), slow(text_reply("second"), 0.4))
        spec = resolve_model("smollm2-135m", env={}).model_copy(
            update={"base_url": server.base_url}
        )
        assert spec.launch is not None and spec.launch.slots == 1
        model = openai_client(spec)
        try:
            turns = await asyncio.gather(
                model.complete([{"role": "user", "content": "a"}], []),
                model.complete([{"role": "user", "content": "b"}], []),
            )
        finally:
            await model.aclose()
        assert sorted(t.content or "" for t in turns) == ["first", "second"]
        first, second = server.request_times
        assert second - first >= 0.35  # the second was sent when the first had its answer


def test_a_run_of_a_single_slot_alias_runs_one_episode_at_a_time(tmp_path: Path) -> None:
    """More episodes than the server has slots would wait in turn with their wall clocks
    running: the run caps them at the model's slots, whatever --concurrency says."""
    from sandbox.run import run_suite
    from sandbox.store import read_trajectories
    from sandbox.store.config import RunConfig
    from tests.agents.models.openai_server import ScriptedOpenAIServer

    with ScriptedOpenAIServer(models=["SmolLM2-135M-Instruct"]) as server:
        config = RunConfig(
            agent="react",
            model="smollm2-135m",
            tasks=["g1_flight_baggage", "g1_call_time_tokyo", "g1_convert_eur_jpy"],
            concurrency=4,
            out=str(tmp_path),
        )
        env = {"SANDBOX_SMOLLM2_135M_BASE_URL": server.base_url}
        result = run_suite(config, env=env, show_progress=False)
    spans = sorted((t.started_at, t.ended_at) for t in read_trajectories(result.path))
    assert len(spans) == 3
    assert all(later[0] >= earlier[1] for earlier, later in zip(spans, spans[1:], strict=False))


async def test_after_a_timeout_a_single_slot_alias_waits_out_the_abandoned_generation() -> None:
    """llama.cpp goes on generating for a request the client gave up on: the slot is held until
    a one-token request queued behind it is answered, and only then is the next request sent."""
    from tests.agents.models.openai_server import ScriptedOpenAIServer, slow, text_reply

    with ScriptedOpenAIServer(models=["SmolLM2-135M-Instruct"]) as server:
        server.push(slow(text_reply("too late"), 1.0), text_reply("."), text_reply("next"))
        spec = resolve_model("smollm2-135m", env={}).model_copy(
            update={"base_url": server.base_url, "timeout": 0.3}
        )
        model = openai_client(spec)
        try:
            with pytest.raises(ModelError) as info:
                await model.complete([{"role": "user", "content": "a"}], [])
            assert info.value.kind == "timeout" and info.value.attempts == 1
            turn = await model.complete([{"role": "user", "content": "b"}], [])
        finally:
            await model.aclose()
    assert turn.content == "next"
    asked = [(r["messages"][-1]["content"], r.get("max_tokens")) for r in server.requests]
    assert asked == [("a", 192), (".", 1), ("b", 192)]
