"""Over real HTTP: uvicorn on 127.0.0.1 on a free port, in a thread, then stopped."""

import socket
import threading
import time

import httpx
import pytest
import uvicorn

from mock_tools import PROVENANCE_HEADER, create_app


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def base_url(suite):
    port = _free_port()
    config = uvicorn.Config(create_app(suite), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("uvicorn did not start")
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
    assert not thread.is_alive()


def test_native_and_virtual_over_http(base_url):
    with httpx.Client(base_url=base_url, timeout=5) as c:
        assert c.get("/health").json()["status"] == "ok"
        r = c.post("/tools/Weather Now/current", json={"days": "1", "city": "Oslo "})
        assert r.status_code == 200 and r.headers[PROVENANCE_HEADER] == "hit"
        assert r.json()["body"] == {"temp_c": 3, "sky": "snow"}
        v = c.post(
            "/virtual",
            json={
                "category": "Weather",
                "tool_name": "weather_now",
                "api_name": "current_for_weather_now",
                "tool_input": '{"city": "Oslo"}',
                "strip": "",
                "toolbench_key": "",
            },
        )
        assert v.json() == {"error": "", "response": {"temp_c": 3, "sky": "snow"}}
        assert c.post("/tools/x/y", json={}).status_code == 404
        assert c.post("/tools/shop/id", content=b"{").status_code == 400
        assert c.get("/stats").json()["totals"] == {"bad_request": 1, "hit": 2, "unknown": 1}


def test_serve_command_keeps_upstream_answers_in_the_overlay(base_url, suite_dir, tmp_path):
    """`serve --miss-policy upstream` forwards a miss to a real server and keeps the answer in
    the suite's overlay, never in the suite's own files: the next identical call is served from
    the overlay, and the suite's fingerprint does not change."""
    import shutil
    import subprocess
    import sys

    from mock_tools import load_suite
    from mock_tools.overlay import OverlayStore

    empty = tmp_path / "empty"
    shutil.copytree(suite_dir, empty)
    shutil.rmtree(empty / "recordings")
    before = load_suite(empty).fingerprint
    port = _free_port()
    cmd = [sys.executable, "-m", "mock_tools", "serve", str(empty), "--port", str(port)]
    cmd += ["--miss-policy", "upstream", "--upstream-url", f"{base_url}/tools"]
    cmd += ["--log-level", "warning"]
    proc = subprocess.Popen(cmd)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(f"{url}/health", timeout=1)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("mock_tools serve did not start")
                time.sleep(0.1)
        with httpx.Client(base_url=url, timeout=5) as c:
            first = c.post("/tools/Weather Now/current", json={"city": "Oslo"})
            assert first.headers[PROVENANCE_HEADER] == "upstream"
            assert first.json()["body"] == {"temp_c": 3, "sky": "snow"}
            again = c.post("/tools/Weather Now/current", json={"city": " Oslo", "days": 1})
            assert again.headers[PROVENANCE_HEADER] == "upstream"
            assert again.json()["body"] == first.json()["body"]
            assert again.json()["origin"]["source"] == "upstream"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert not (empty / "recordings").exists()
    assert load_suite(empty).fingerprint == before
    (kept,) = list(OverlayStore(empty / "overlay.sqlite").recordings())
    assert kept.provenance.source == "upstream" and kept.args == {"city": "Oslo", "days": 1}
