"""Hardening round three: ports and servers (issue 39 item 4; issue 40 items 6 and 7, serve).

``serve --workers N`` joined a port another server held (SO_REUSEPORT let it take part of that
server's connections); ``sandbox launch ALIAS`` started a second server when one of the alias
already answered, and on a busy ``--port`` printed "serving..." then exited 1 with no error
line; ``launch:`` under an offline kind was silently ignored; a ``/v1/models`` answering HTML
crashed the model probe with a traceback; ``serve`` took ``mcp`` and ``mcp_stdio`` together (from
a config file, where argparse's exclusive group does not look).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from tests.hostile.conftest import MINI, ROOT, serving
from tests.hostile.test_one_line_errors import cli
from tests.hostile.test_run_records import one_error_line
from tests.hostile.test_serve_start import serve

MODEL = "the-served-model"


@contextmanager
def held_port(reuseport: bool) -> Iterator[int]:
    """A port another process's server listens on (with SO_REUSEPORT, as ``serve --workers``
    binds it, when ``reuseport``)."""
    with socket.socket() as taken:
        if reuseport:
            taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


@pytest.mark.parametrize("cli_name", ["sandbox", "mock_tools"])
def test_39_4_serve_with_workers_never_joins_a_port_another_server_holds(cli_name: str) -> None:
    """On main the workers bound the port beside the other server (the command served: timed
    out here) and took part of its connections."""
    with held_port(reuseport=True) as port:
        done = serve(cli_name, "--port", str(port), "--workers", "2")
    assert done.returncode == 2, done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in one_error_line(done.stderr)


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ("mcp: true\nmcp_stdio: true\n", "mcp and mcp_stdio exclude each other"),
        ("overlay: o.sqlite\nrecord_to: r.jsonl\n", "give --overlay or --record-to, not both"),
    ],
)
def test_40_7_serve_refuses_settings_that_exclude_each_other_from_a_config_file(
    settings: str, said: str, tmp_path: Path
) -> None:
    """On main `serve --config` with mcp and mcp_stdio both true started an MCP stdio server."""
    config = tmp_path / "serve.yaml"
    config.write_text(settings)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "sandbox", "serve", str(MINI), "--config", str(config)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=20,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and said in one_error_line(done.stderr), done.stderr


_ANSWERS: dict[str, tuple[int, object]] = {
    "html": (200, "<html>a proxy's page</html>"),
    "unknown model": (
        404,
        {"error": {"message": "model 'm' not found", "code": "model_not_found"}},
    ),
    "json, no completion": (200, {"status": "ok"}),
}


@pytest.mark.parametrize(
    ("answer", "code", "said", "questions"),
    [
        ("html", 2, "does not answer as an OpenAI-compatible chat completions API", 1),
        ("unknown model", 2, "refused the configuration (model_not_found)", 1),
        ("json, no completion", 0, "", 4),
    ],
)
def test_39_5_probe_stops_at_an_endpoint_no_question_can_get_past(
    answer: str,
    code: int,
    said: str,
    questions: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Trial case 207: on main every question of the probe was asked, each with all its
    retries, against an endpoint whose /v1/models and completions answer a web page (4
    questions at --concurrency 1: 91 s with the default retries) and it exited 0 with nothing
    scored. Now the first answer that is not JSON at all (after its retries), or a refused
    configuration, stops it: one line, exit 2, no other question asked. A JSON body that is
    no completion stays one question's failure: all 4 questions are asked."""
    status, body = _ANSWERS[answer]
    asked: list[bytes] = []

    async def page(request: Request) -> Response:
        if request.method == "POST":
            asked.append(await request.body())
        if isinstance(body, str):
            return HTMLResponse(body, status_code=status)
        return JSONResponse(body, status_code=status)

    app = Starlette(
        routes=[
            Route("/v1/models", page),
            Route("/v1/chat/completions", page, methods=["POST"]),
        ]
    )
    with serving(app) as url:
        file = tmp_path / "models.yaml"
        file.write_text(
            "models:\n  mine:\n    kind: openai\n    model: m\n"
            f"    base_url: {url}/v1\n"
            "    retry: {max_retries: 0, initial: 0, jitter: 0}\n"
        )
        monkeypatch.setenv("SANDBOX_MODELS_FILE", str(file))
        argv = ["probe", "--suite", str(MINI), "--model", "mine", "--tasks", "mini_g1_track"]
        got, err = cli([*argv, "--concurrency", "1"], capsys)
    assert got == code and "Traceback" not in err, err
    if said:
        line = one_error_line(err)
        assert said in line and "the probe stopped (0 of 4 questions answered)" in line, line
    assert len(set(asked)) == questions, asked


def _models_app(body: object, html: bool = False) -> Starlette:
    async def models(request: object) -> object:
        return HTMLResponse("<html>a proxy's page</html>") if html else JSONResponse(body)

    return Starlette(routes=[Route("/v1/models", models)])


def _registry(tmp_path: Path, base_url: str, kind: str = "openai") -> dict[str, str]:
    file = tmp_path / "models.yaml"
    file.write_text(
        "models:\n"
        "  mine:\n"
        f"    kind: {kind}\n"
        f"    model: {MODEL}\n"
        f"    base_url: {base_url}\n"
        "    launch: {server: llamacpp, gguf: /nowhere/model.gguf}\n"
    )
    return {"SANDBOX_MODELS_FILE": str(file)}


def _launch(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sandbox", "launch", "mine", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_39_4_launch_says_so_when_a_server_of_the_alias_already_answers(tmp_path: Path) -> None:
    """On main it started a second server, which failed to bind (exit 1)."""
    with serving(_models_app({"object": "list", "data": [{"id": MODEL}]})) as url:
        done = _launch(_registry(tmp_path, f"{url}/v1"))
    assert done.returncode == 0, done.stderr
    assert f"mine is served at {url}/v1 already" in done.stdout, done.stdout


@pytest.mark.parametrize("holder", ["another model", "html", "no http"])
def test_40_6_launch_on_a_port_another_process_holds_is_one_line_exit_2(
    holder: str, tmp_path: Path
) -> None:
    """On main it printed "serving mine at ..." and then exited 1 with no error line."""
    if holder == "no http":
        with held_port(reuseport=False) as port:
            done = _launch(_registry(tmp_path, f"http://127.0.0.1:{port}/v1"))
        said = f"cannot listen on 127.0.0.1:{port}"
    else:
        app = _models_app({"data": [{"id": "other"}]}, html=holder == "html")
        with serving(app) as url:
            done = _launch(_registry(tmp_path, f"{url}/v1"))
        said = "is held by another server"
    assert done.returncode == 2 and said in one_error_line(done.stderr), done.stderr
    assert "serving" not in done.stderr


def test_40_6_launch_under_an_offline_kind_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main `launch:` under `kind: reference` was silently ignored (the run ran offline)."""
    for key, value in _registry(tmp_path, "http://127.0.0.1:9/v1", kind="reference").items():
        monkeypatch.setenv(key, value)
    argv = ["run", "--suite", str(MINI), "--model", "mine", "--out", str(tmp_path / "runs")]
    code, err = cli(argv, capsys)
    line = one_error_line(err)
    assert code == 2 and "runs offline and uses no launch, base_url" in line, err


@pytest.mark.parametrize("command", ["run", "probe"])
def test_40_6_a_models_route_answering_html_does_not_crash_the_probe(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main: AttributeError: 'str' object has no attribute '_set_private_attributes'. Now
    the endpoint counts as reachable (serving no model it could name); what its completion
    route then answers (404 here) is handled as any endpoint's."""
    with serving(_models_app(None, html=True)) as url:
        argv = [command, "--suite", str(MINI), "--model", f"openai:m@{url}/v1"]
        if command == "run":
            argv += ["--out", str(tmp_path / "runs"), "--tasks", "mini_g1_track"]
            argv += ["--max-model-calls", "1", "--no-plots"]
        code, err = cli(argv, capsys)
    assert code in (0, 2) and "Traceback" not in err and "AttributeError" not in err, err
