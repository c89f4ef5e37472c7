"""The third round's hostile trial over issue 40's surfaces: 200 cases and more, each one input a
hostile user or process can give, each asserting what a careful program does with it.

Surfaces (the issue's items): the viewer and its export over run folders whose files are links
out, FIFOs or loops (1); credentials in every channel a run takes them from, against every sink
that writes or prints them (2); an external episode's gateway under malformed bodies, after its
end and from a process that is not its agent (3); number settings given true or false (7); tool
answers that flood on every transport (10). It is written against behaviour only (the command
line, the HTTP routes, the public helpers that existed before), so the same module measures the
code before the round's fixes: docs/reliability.md and the closing note give both counts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from sandbox.cli import main
from sandbox.store.redact import redact
from tests.hostile.conftest import MINI
from tests.hostile.test_run_records import make_run
from tests.sandbox.external.test_external_scope import Scripted, episode

SECRET = "SEKRIT"
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 64
PLOTS = ("pass_rate.png", "step_profile.png", "cost_vs_pass.png")
RECORD_FILES = ("manifest.json", "scores.json", "trajectories.jsonl")
LINKS = (
    "etc_passwd",
    "outside",
    "outside_relative",
    "chain",
    "directory",
    "dangling",
    "loop",
    "fifo",
)


def _within(seconds: float, call: Callable[[], Any]) -> Any:
    """``call()``'s value, or a failure when it does not return within ``seconds`` (a read of a
    FIFO would block the test for ever)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as e:  # re-raised below
            box["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"no answer within {seconds} s (a blocking read?)"
    if "error" in box:
        raise box["error"]
    return box["value"]


# -- 1. the viewer and its export: only regular files inside each run's folder ------------------


@pytest.fixture(scope="module")
def scored_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = make_run(tmp_path_factory.mktemp("viewer"), "base")
    for plot in PLOTS:
        (run / plot).write_bytes(PNG)
    return run


def _planted(scored_run: Path, tmp: Path, name: str, kind: str) -> tuple[Path, Path]:
    """A copy of the run under ``tmp/runs`` whose ``name`` is replaced by a ``kind`` of link;
    the runs folder and the run."""
    root = tmp / "runs"
    run = root / "planted"
    shutil.copytree(scored_run, run)
    outside = tmp / "outside"
    outside.mkdir()
    secret = outside / name
    if name.endswith(".png"):
        secret.write_bytes(SECRET.encode() * 10)
    else:  # the same record, its ids marked: shown only if the file is read
        secret.write_text(
            (run / name).read_text().replace('"run_id": "base"', f'"run_id": "{SECRET}"')
        )
        secret.write_text(secret.read_text().replace('"base"', f'"{SECRET}"'))
    target = run / name
    target.unlink()
    if kind == "etc_passwd":
        target.symlink_to("/etc/passwd")
    elif kind == "outside":
        target.symlink_to(secret)
    elif kind == "outside_relative":
        target.symlink_to(Path("../../outside") / name)
    elif kind == "chain":  # a link to a link of the run, which leads out
        (run / "hop").symlink_to(secret)
        target.symlink_to("hop")
    elif kind == "directory":
        target.symlink_to(outside)
    elif kind == "dangling":
        target.symlink_to(outside / "nothing")
    elif kind == "loop":
        target.symlink_to(target.name)
    else:
        os.mkfifo(target)
    return root, run


def _nothing_leaks(texts: list[bytes]) -> None:
    for text in texts:
        assert SECRET.encode() not in text and b"root:x:0" not in text, text[:200]


@pytest.mark.parametrize("kind", LINKS)
@pytest.mark.parametrize("name", PLOTS + RECORD_FILES)
def test_viewer_serves_nothing_outside_a_run_folder(
    scored_run: Path, tmp_path: Path, name: str, kind: str
) -> None:
    from sandbox.view.app import create_app

    root, _ = _planted(scored_run, tmp_path, name, kind)
    client = TestClient(create_app(root), raise_server_exceptions=False)
    paths = ["/api/runs", "/api/runs/planted", "/api/runs/planted/episodes", "/api/leaderboard"]
    paths += [f"/api/runs/planted/plots/{p}" for p in PLOTS]
    answers = _within(20, lambda: [client.get(p) for p in paths])
    assert all(a.status_code < 500 for a in answers), [
        (p, a.status_code) for p, a in zip(paths, answers, strict=True)
    ]
    _nothing_leaks([a.content for a in answers])


@pytest.mark.parametrize("kind", LINKS)
@pytest.mark.parametrize("name", PLOTS)
def test_export_copies_nothing_outside_a_run_folder(
    scored_run: Path, tmp_path: Path, name: str, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _, run = _planted(scored_run, tmp_path, name, kind)
    out = tmp_path / "site"
    code = _within(60, lambda: main(["view", "--export", str(out), str(run)]))
    assert code == 0, capsys.readouterr().err
    _nothing_leaks([p.read_bytes() for p in out.rglob("*") if p.is_file()])


# -- 2. credentials: given whole to what needs them, written and printed nowhere ----------------

EXTERNAL = ["--agent", "external"]
OPENAI = ["--model", "openai:m@http://127.0.0.1:9/v1"]
CHANNELS: dict[str, list[str]] = {
    "model url user info": ["--model", f"openai:m@http://u:{SECRET}@127.0.0.1:9/v1"],
    "model url key": ["--model", f"openai:m@http://127.0.0.1:9/v1?api_key={SECRET}"],
    "tools url user info": ["--tools-url", f"http://u:{SECRET}@127.0.0.1:9"],
    "tools url token": ["--tools-url", f"http://127.0.0.1:9/?token={SECRET}"],
    "mcp option =": ["--mcp-server", f"stdio:no-such-server --api-key={SECRET}"],
    "mcp option space": ["--mcp-server", f"stdio:no-such-server --api-key {SECRET}"],
    "mcp env": ["--mcp-server", f"stdio:env HF_TOKEN={SECRET} no-such-server"],
    "mcp url": ["--mcp-server", f"http://u:{SECRET}@127.0.0.1:9/mcp"],
    "agent url": [*EXTERNAL, "-O", f"url=http://u:{SECRET}@127.0.0.1:9/"],
    "agent url query": [*EXTERNAL, "-O", f"url=http://127.0.0.1:9/?access_token={SECRET}"],
    "command env": [*EXTERNAL, "-O", f"command=OPENAI_API_KEY={SECRET} no-such-agent"],
    "command option": [*EXTERNAL, "-O", f"command=no-such-agent --password {SECRET}"],
    "command bearer": [*EXTERNAL, "-O", f"command=curl -H 'Authorization: Bearer {SECRET}' x"],
    "model option key": [*OPENAI, "--model-option", f"api_key={SECRET}"],
    "model option header": [
        *OPENAI,
        "--model-option",
        f'extra_headers={{"X-Api-Key": "{SECRET}"}}',
    ],
    "transport option": ["--transport-option", f'headers={{"Authorization": "Bearer {SECRET}"}}'],
    "miss option": ["--miss-policy", "upstream", "--miss-option", f"api_key={SECRET}"],
    "upstream url": ["--miss-policy", "upstream", "--upstream-url", f"http://u:{SECRET}@h/"],
    "simulator url": [
        "--miss-policy",
        "simulate",
        "--simulator",
        f"openai:m@http://u:{SECRET}@127.0.0.1:9/v1",
    ],
    "ray address": ["--executor", "ray", "--ray-address", f"ray://admin:{SECRET}@127.0.0.1:9"],
    "executor option": ["--executor", "ray", "--executor-option", f"auth_token={SECRET}"],
    "-C mapping": ["-C", f'model.options={{"api_key": "{SECRET}"}}', *OPENAI],
}


@pytest.mark.parametrize("channel", sorted(CHANNELS))
def test_print_config_shows_no_credential(channel: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--suite", str(MINI), "--print-config", *CHANNELS[channel]])
    out, err = capsys.readouterr()
    assert code in (0, 2), err
    assert SECRET not in out + err


@pytest.mark.parametrize("channel", sorted(CHANNELS))
def test_a_run_writes_and_prints_no_credential(
    channel: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run may fail (nothing answers at those addresses): what it prints and whatever it
    left in its folder hold no credential."""
    argv = ["run", "--suite", str(MINI), "--tasks", "mini_g1_kettle_price", "--no-plots"]
    argv += ["--out", str(tmp_path / "runs"), *CHANNELS[channel]]
    if "--model" not in argv:
        argv += ["--model", "reference"]
    if "-O" in argv:
        argv += ["-O", "timeout=5", "-O", "grace=0.2"]
    main(argv)
    out, err = capsys.readouterr()
    assert SECRET not in out + err
    _nothing_leaks([p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()])


REDACTED_TEXTS = [
    (f"http://u:{SECRET}@h/v1", "http://***@h/v1"),
    (f"https://h/v1?api_key={SECRET}&x=1", "https://h/v1?api_key=***&x=1"),
    (f"ray://admin:{SECRET}@head:10001", "ray://***@head:10001"),
    (f"srv --api-key={SECRET} --port 3", "srv --api-key=*** --port 3"),
    (f"srv --api-key {SECRET} -v", "srv --api-key *** -v"),
    (f"srv --token={SECRET}", "srv --token=***"),
    (f"srv --hf-token '{SECRET} x'", "srv --hf-token '***'"),
    (f"srv --client-secret {SECRET}", "srv --client-secret ***"),
    (f"OPENAI_API_KEY={SECRET} node a.js", "OPENAI_API_KEY=*** node a.js"),
    (f'export GITHUB_TOKEN="{SECRET}"', 'export GITHUB_TOKEN="***"'),
    (f"python a.py model.api_key={SECRET}", "python a.py model.api_key=***"),
    (f'{{"api_key": "{SECRET}"}}', '{"api_key": "***"}'),
    (f'{{"password": "{SECRET}", "n": 1}}', '{"password": "***", "n": 1}'),
    (f"Authorization: Bearer {SECRET}", "Authorization: Bearer ***"),
    (f"cannot reach http://u:{SECRET}@h:1/ (refused)", "cannot reach http://***@h:1/ (refused)"),
    # what is no secret stays as it is
    ("--max-tokens 100", "--max-tokens 100"),
    ("answer in key=value pairs", "answer in key=value pairs"),
    ("-O expects KEY=VALUE, got x", "-O expects KEY=VALUE, got x"),
    ("the keyword is kettle", "the keyword is kettle"),
    ("--auth --verbose", "--auth --verbose"),
]


@pytest.mark.parametrize(("text", "shown"), REDACTED_TEXTS)
def test_redaction_of_text(text: str, shown: str) -> None:
    assert redact(text) == shown


# -- 3. an external episode's gateway --------------------------------------------------------

DEEP = "[" * 100_000 + "]" * 100_000
BAD_PROXY_BODIES: dict[str, Any] = {
    "tool_calls text": {"messages": [{"role": "assistant", "tool_calls": "nope"}]},
    "tool_calls number": {"messages": [{"role": "assistant", "tool_calls": 5}]},
    "tool_calls object": {"messages": [{"role": "assistant", "tool_calls": {"a": 1}}]},
    "tool_call number": {"messages": [{"role": "assistant", "tool_calls": [1]}]},
    "tool_call function text": {
        "messages": [{"role": "assistant", "tool_calls": [{"function": "f"}]}]
    },
    "tool_call name number": {
        "messages": [{"role": "assistant", "tool_calls": [{"function": {"name": 5}}]}]
    },
    "tool_call id number": {
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [{"id": 3, "function": {"name": "f", "arguments": "{}"}}],
            }
        ]
    },
    "content number": {"messages": [{"role": "user", "content": 5}]},
    "content object": {"messages": [{"role": "user", "content": {"a": 1}}]},
    "content parts of numbers": {"messages": [{"role": "user", "content": [1, 2]}]},
    "role number": {"messages": [{"role": 5, "content": "x"}]},
    "no role": {"messages": [{"content": "x"}]},
    "tool_call_id number": {"messages": [{"role": "tool", "tool_call_id": 5, "content": "x"}]},
    "messages empty": {"messages": []},
    "messages text": {"messages": "hello"},
    "messages numbers": {"messages": [5]},
    "tools text": {"messages": [{"role": "user", "content": "x"}], "tools": "x"},
    "tools numbers": {"messages": [{"role": "user", "content": "x"}], "tools": [5]},
    "n two": {"messages": [{"role": "user", "content": "x"}], "n": 2},
    "array body": [],
    "number body": 5,
    "not json": "{not json",
    "deep arrays": DEEP,
    "deep objects": '{"a":' * 50_000 + "1" + "}" * 50_000,
    "deep content": {
        "messages": [{"role": "user", "content": [{"a": json.loads("[" * 80 + "]" * 80)}]}]
    },
}


def _posted(route: str, body: Any) -> tuple[int, str, Any]:
    async def go() -> tuple[int, str, Any]:
        async with episode(Scripted()) as (scope, urls):
            content = body if isinstance(body, str) else json.dumps(body)
            async with httpx.AsyncClient() as http:
                resp = await http.post(f"{urls.base}{route}", content=content, timeout=30)
            return resp.status_code, resp.text, scope.fatal

    import asyncio

    return asyncio.run(go())


@pytest.mark.parametrize("name", sorted(BAD_PROXY_BODIES))
def test_proxy_answers_a_malformed_request_400(name: str) -> None:
    status, text, fatal = _posted("/v1/chat/completions", BAD_PROXY_BODIES[name])
    assert status == 400 and fatal is None, (status, text[:300])


BAD_CALL_BODIES: dict[str, Any] = {
    "not json": "{",
    "array": [],
    "no name": {"arguments": {}},
    "name number": {"name": 5},
    "deep arrays": DEEP,
    "deep objects": '{"a":' * 50_000 + "1" + "}" * 50_000,
}


@pytest.mark.parametrize("name", sorted(BAD_CALL_BODIES))
def test_call_answers_a_malformed_request_400(name: str) -> None:
    status, text, fatal = _posted("/call", BAD_CALL_BODIES[name])
    assert status == 400 and fatal is None, (status, text[:300])


ROUTES = [
    ("GET", "/tools"),
    ("GET", "/health"),
    ("GET", "/openapi.json"),
    ("GET", "/v1/models"),
    ("POST", "/call"),
    ("POST", "/v1/chat/completions"),
    ("POST", "/tools/shop/search_products"),
    ("POST", "/mcp"),
]


@pytest.mark.parametrize(("method", "route"), ROUTES)
def test_nothing_answers_once_the_episode_is_over(method: str, route: str) -> None:
    import asyncio

    async def go() -> int:
        async with episode(Scripted()) as (scope, urls):
            scope.end()  # as a Finish does
            async with httpx.AsyncClient() as http:
                body = {"name": "search_products_for_shop", "arguments": {}}
                resp = await http.request(method, f"{urls.base}{route}", json=body, timeout=30)
            return resp.status_code

    assert asyncio.run(go()) == 400


@pytest.mark.parametrize(("method", "route"), ROUTES)
def test_a_process_that_is_not_the_agent_is_refused(method: str, route: str) -> None:
    """The episode's agent is another process (a ``sleep`` in a session of its own stands for
    it): a request from this process, which knows the URL and its token, is refused on every
    route."""
    import asyncio

    from sandbox.external.peer import EpisodeProcesses

    async def go(agent: int) -> int:
        async with episode(Scripted()) as (scope, urls):
            scope.agent = EpisodeProcesses(agent)
            async with httpx.AsyncClient() as http:
                body = {"name": "search_products_for_shop", "arguments": {}}
                resp = await http.request(method, f"{urls.base}{route}", json=body, timeout=30)
            return resp.status_code

    agent = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        assert asyncio.run(go(agent.pid)) == 403
    finally:
        agent.kill()
        agent.wait()


# -- 7. a number setting given true or false ---------------------------------------------------


def _number_settings() -> Iterator[str]:
    from sandbox.store import RunConfig
    from sandbox.store.setting import setting_fields, unwrap_optional

    for s in setting_fields(RunConfig):
        if unwrap_optional(s.field.annotation) in (int, float):
            yield s.path


@pytest.mark.parametrize("path", sorted(_number_settings()))
def test_a_number_setting_given_true_is_refused(
    path: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    *sections, name = path.split(".")
    data: dict[str, Any] = {name: True}
    for section in reversed(sections):
        data = {section: data}
    file = tmp_path / "run.json"
    file.write_text(json.dumps(data))
    assert main(["run", "--config", str(file), "--print-config"]) == 2
    assert "takes a number" in capsys.readouterr().err


# -- 10. tool answers that flood, on every transport ---------------------------------------------


@pytest.mark.parametrize("megabytes", [1.5, 8.0, None], ids=["over", "far over", "endless"])
@pytest.mark.parametrize("path", ["tools-url", "forwarder"])
def test_a_flooding_tool_answer_is_cut_at_the_cap(
    path: str, megabytes: float | None, tmp_path: Path
) -> None:
    from sandbox.store import read_trajectories
    from tests.hostile.tool_floods import forwarder_case, tools_url_case

    case = tools_url_case if path == "tools-url" else forwarder_case
    got = case(megabytes, tmp_path, "--max-tool-reply-bytes", str(2**20), timeout=240)
    assert got.code == 0, got.stderr[-1500:]
    (traj,) = read_trajectories(Path(json.loads(got.stdout.splitlines()[-1])["run"]))
    calls = [c for n in traj.nodes for c in n.calls if c.observation is not None]
    assert calls and calls[0].observation.provenance == "fault:reply_too_large"
    assert got.peak_mib < 200
