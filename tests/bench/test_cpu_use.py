"""The CPU accounting the HTTP benchmark uses to say where multi-core serving's cores go."""

from __future__ import annotations

import subprocess
import sys

from bench.cpu_use import children_cpu, tree_cpu

# spins until it has used `cpu` seconds of CPU, prints that, then waits for stdin to close
_SPIN = (
    "import sys, time\n"
    "cpu = float(sys.argv[1])\n"
    "while time.process_time() < cpu:\n"
    "    pass\n"
    "print(time.process_time(), flush=True)\n"
    "sys.stdin.read()\n"
)
# starts the spinner as its own child, passes its line on, and waits like it
_PARENT = (
    "import subprocess, sys\n"
    "child = subprocess.Popen([sys.executable, '-c', sys.argv[1], sys.argv[2]],"
    " stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True)\n"
    "print(child.stdout.readline().strip(), flush=True)\n"
    "sys.stdin.read()\n"
    "child.stdin.close(); child.wait()\n"
)
_TICK = 0.02  # /proc counts in clock ticks (1/100 s); allow two


def test_tree_cpu_counts_the_cpu_of_a_servers_worker_processes() -> None:
    """A server's workers are its children: the tree's CPU includes what a grandchild spent."""
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT, _SPIN, "0.3"],
        stdout=subprocess.PIPE,
        stdin=subprocess.PIPE,
        text=True,
    )
    try:
        assert parent.stdout is not None
        spent = float(parent.stdout.readline())
        assert spent >= 0.3
        assert tree_cpu(parent.pid) >= spent - _TICK
    finally:
        assert parent.stdin is not None
        parent.stdin.close()
        parent.wait(timeout=30)


def test_children_cpu_grows_by_what_a_finished_child_spent() -> None:
    """The load generator runs as a waited-for child: its CPU shows once it has finished."""
    before = children_cpu()
    done = subprocess.run(
        [sys.executable, "-c", _SPIN, "0.2"], input="", capture_output=True, text=True, check=True
    )
    assert children_cpu() - before >= float(done.stdout) - _TICK
