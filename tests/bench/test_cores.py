"""``make bench``'s core layout and time bound (``bench.cores``, ``bench.__main__``).

What it protects:
- ``--cores auto`` pins the load generator to the last quarter of the cores (the servers to the
  rest) when there are 4 or more, and pins nothing on fewer; ``SERVERS/LOAD`` is read as
  ``taskset`` lists; overlapping, unusable or malformed layouts are one line and exit 2;
- a server started under a layout runs on the servers' cores (its workers inherit them), and a
  child pinned to the load cores runs there, every thread of it;
- a benchmark past ``--max-seconds`` is stopped with everything it started, and the run still
  finishes, its row saying so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.__main__ import bounded, main
from bench.cores import CoreLayout, cpu_list, parse_cores
from bench.http_servers import Server
from bench.report import BenchResult, Target

SIXTEEN = frozenset(range(16))


def test_auto_pins_the_load_generator_apart_only_when_there_are_the_cores() -> None:
    wide = parse_cores("auto", SIXTEEN)
    assert wide.servers == frozenset(range(12)) and wide.load == frozenset(range(12, 16))
    assert wide.describe() == "servers on cores 0-11, load generator on 12-15"
    assert wide.load_threads(16) == 4 and wide.load_threads(2) == 2
    four = parse_cores("auto", frozenset({0, 1, 2, 3}))
    assert (four.servers, four.load) == (frozenset({0, 1, 2}), frozenset({3}))
    odd = parse_cores("auto", frozenset({2, 3, 5, 7, 8}))  # the usable cores, not 0..n-1
    assert (odd.servers, odd.load) == (frozenset({2, 3, 5, 7}), frozenset({8}))
    for small in (frozenset({0, 1}), frozenset({0, 1, 2})):
        shared = parse_cores("auto", small)
        assert not shared.pinned and shared.pin("servers") is None and shared.pin("load") is None
        assert shared.load_threads(16) == 1
    assert not parse_cores("shared", SIXTEEN).pinned


def test_an_explicit_layout_is_read_as_taskset_lists() -> None:
    layout = parse_cores("0-2,5/6,8-9", SIXTEEN)
    assert layout.servers == frozenset({0, 1, 2, 5}) and layout.load == frozenset({6, 8, 9})
    assert layout.as_json() == {"spec": "0-2,5/6,8-9", "servers": [0, 1, 2, 5], "load": [6, 8, 9]}
    assert cpu_list({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8"


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("0-7/7-15", "cores 7 are in both lists"),
        ("0-7/8-16", "cores 16 are not usable here (usable: 0-15)"),
        ("0-7", "auto, shared, or SERVERS/LOAD"),
        ("a/1", "'a' is not a CPU list"),
        ("3-1/4", "'3-1' counts down"),
    ],
)
def test_a_layout_that_cannot_be_had_says_why(spec: str, says: str) -> None:
    with pytest.raises(ValueError, match=says.replace("(", r"\(").replace(")", r"\)")):
        parse_cores(spec, SIXTEEN)


def test_a_bad_layout_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["store", "--cores", "0-1/1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: --cores '0-1/1': cores 1 are in both lists"]
    assert main(["store", "--max-seconds", "-1"]) == 2


def _two_cores() -> CoreLayout:
    usable = sorted(os.sched_getaffinity(0))
    if len(usable) < 2:
        pytest.skip("one usable core: nothing to pin apart")
    return parse_cores(f"{usable[0]}/{cpu_list(usable[1:])}")


def _allowed(pid: int) -> str:
    status = Path(f"/proc/{pid}/status").read_text()
    return next(
        ln.split(":")[1].strip() for ln in status.splitlines() if ln.startswith("Cpus_allowed_list")
    )


def test_servers_and_the_load_run_on_their_own_cores() -> None:
    layout = _two_cores()
    assert layout.servers is not None and layout.load is not None
    with Server("asgi", cores=layout) as server:
        assert _allowed(server.pid) == cpu_list(layout.servers)
    threads = (
        "import os, threading\n"
        "seen = []\n"
        "t = threading.Thread(target=lambda: seen.append(sorted(os.sched_getaffinity(0))))\n"
        "t.start(); t.join()\n"
        "print(sorted(os.sched_getaffinity(0)), seen[0])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", threads],
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=layout.pin("load"),
    ).stdout.split("] [")
    assert [part.strip("[]\n") for part in out] == [", ".join(map(str, sorted(layout.load)))] * 2


def test_a_child_past_its_time_is_stopped_with_what_it_started(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild"
    code = (
        "import subprocess, sys, time, pathlib\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        f"pathlib.Path({str(pidfile)!r}).write_text(str(p.pid))\n"
        "time.sleep(120)\n"
    )
    started = time.monotonic()
    assert bounded([sys.executable, "-c", code], 3.0) is None
    assert time.monotonic() - started < 60
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{grandchild}/stat").read_text().split(")")[1].split()[0]
        except FileNotFoundError:
            break
        if state == "Z":  # killed, waiting for its new parent to reap it
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the benchmark's own child {grandchild} outlived the bound")
    assert bounded([sys.executable, "-c", "raise SystemExit(3)"], 30.0) == 3


def test_a_benchmark_past_max_seconds_is_reported_and_the_run_finishes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    assert main(["http", "--max-seconds", "1", "--out", str(tmp_path)]) == 0
    assert time.monotonic() - started < 30
    out = capsys.readouterr().out
    assert "did not finish within 1 s" in out
    (saved,) = tmp_path.glob("*.json")
    doc = json.loads(saved.read_text())
    assert doc["results"]["http"]["not_measured"] == "did not finish within 1 s"
    assert doc["max_seconds"] == 1 and doc["cores"]["spec"] == "auto"


def test_a_result_crosses_the_process_boundary_whole() -> None:
    result = BenchResult("x", rows=[("a", "1.00 s")], figures={"a": 1.0, "cores": {"spec": "auto"}})
    result.targets.append(Target("6 two workers", 1.7, "x", "one", at_least=1.6))
    result.load = (0.5, 0.75)
    again = BenchResult.from_json(json.loads(json.dumps(result.as_json())))
    assert again == result and again.targets[0].met is True
