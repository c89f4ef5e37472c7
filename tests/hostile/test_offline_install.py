"""Hardening, round two (issue 27), item 17: offline and outside the checkout.

The mock server's API pages load nothing from another host, and the default suite is found
from the installed package when `sandbox run` runs anywhere else than the checkout."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mock_tools import create_app, in_process_client, load_suite
from tests.hostile.conftest import MINI, ROOT

DEFAULT_SUITE = ROOT / "scenarios" / "default"


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
async def test_38_the_api_pages_load_everything_from_the_server_itself(page: str) -> None:
    """Every script, style sheet and icon of /docs and /redoc is served by the mock server
    (200, not empty): nothing comes from a CDN, so the pages render offline."""
    async with in_process_client(create_app(load_suite(MINI))) as client:
        html = (await client.get(page)).text
        urls = re.findall(r"""(?:src|href|url)\s*[=:]\s*['"]([^'"]+)['"]""", html)
        assert urls, html
        for url in urls:
            assert not re.match(r"^(https?:)?//", url), f"{page} loads {url} from another host"
            r = await client.get(url)
            assert r.status_code == 200 and r.content, (url, r.status_code)
    assert "/openapi.json" in html


def test_38_sandbox_run_outside_the_checkout_finds_the_default_suite(tmp_path: Path) -> None:
    """From a folder that has no scenarios/, with the installed package (no PYTHONPATH to the
    checkout), `sandbox run` runs the default suite the package ships."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-m", "sandbox", "run", "--model", "reference", "--tasks", "g1_*"]
        + ["--no-plots", "--json", "--out", "runs"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout.splitlines()[-1])
    assert summary["episodes"] > 0 and summary["pass_rate"] == 1.0
    (run,) = (tmp_path / "runs").iterdir()
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["suite"]["name"] == "default"
    assert manifest["suite"]["fingerprint"] == load_suite(DEFAULT_SUITE).fingerprint


def test_38_every_file_of_the_default_suite_is_package_data() -> None:
    """A wheel carries the default suite: `sandbox/suites/default` is the suite, and the
    package-data globs of pyproject.toml take each of its files."""
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11")
    linked = ROOT / "sandbox" / "suites" / "default"
    assert linked.resolve() == DEFAULT_SUITE.resolve()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    globs = config["tool"]["setuptools"]["package-data"]["sandbox"]
    files = [
        p.relative_to(DEFAULT_SUITE).as_posix()
        for p in DEFAULT_SUITE.rglob("*")
        if p.is_file() and ".cache" not in p.parts
    ]
    assert files
    shipped = [f for f in files if any(_glob(g, f"suites/default/{f}") for g in globs)]
    assert shipped == files


def _glob(pattern: str, path: str) -> bool:
    """setuptools' package-data match: `*` stays within one folder."""
    parts, names = pattern.split("/"), path.split("/")
    return len(parts) == len(names) and all(map(fnmatch.fnmatchcase, names, parts))
