"""The determinism lint of world code names each rule broken by file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from mock_tools.worlds.lint import lint_file, lint_source

BAD = {
    "import time\n": "imports time",
    "from datetime import datetime\nx = datetime.now()\n": "datetime.datetime.now",
    "import datetime\nx = datetime.date.today()\n": "datetime.date.today",
    "import random\nx = random.random()\n": "random.random",
    "from random import choice\n": "random.choice",
    "import uuid\nx = uuid.uuid4()\n": "uuid.uuid4",
    "x = hash('a')\n": "calls hash()",
    "x = id(object())\n": "calls id()",
    "import os\n": "imports os",
    "from os import environ\n": "imports from os",
    "import os.path\n": "imports os.path",
    "import urllib.request\n": "imports urllib.request",
    "import socket\n": "imports socket",
    "import requests\n": "imports requests",
    "x = open('f')\n": "calls open()",
    "import subprocess\n": "imports subprocess",
    "from pathlib import Path\n": "imports from pathlib",
    "import secrets\n": "imports secrets",
    "x = eval('1')\n": "calls eval()",
}


@pytest.mark.parametrize("source", list(BAD))
def test_each_forbidden_use_is_named_with_its_line(source: str) -> None:
    found = lint_source(source, "world.py")
    assert found, source
    assert BAD[source] in found[0].rule
    assert found[0].line == source.count("\n")
    assert str(found[0]).startswith(f"world.py:{found[0].line}: ")


def test_what_the_context_offers_and_pure_code_pass() -> None:
    source = """
import json
import math
import random as rnd
from datetime import datetime, timedelta
from mock_tools.worlds import Context, World, read

def f(ctx):
    t = ctx.now + timedelta(days=1)
    d = datetime.fromisoformat("2026-01-01")
    r = rnd.Random(7).random()
    n = ctx.rng.randint(1, 6)
    return json.dumps([t.isoformat(), d.year, r, n, math.floor(2.5)])
"""
    assert lint_source(source) == []


def test_a_file_that_does_not_parse_is_one_violation(tmp_path: Path) -> None:
    f = tmp_path / "world.py"
    f.write_text("def broken(:\n")
    (v,) = lint_file(f)
    assert v.line == 1 and "syntax error" in v.rule
