"""docs/evaluation.md says what the reference step protocols do not reproduce and how their
exactness is checked: the figures it gives must be the code's and the tests' own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sandbox.eval.benchmarks import python_expr
from tests.sandbox.eval.benchmarks import cases_teval, cases_tooleyes, cases_ultratool

DOC = (Path(__file__).resolve().parents[2] / "docs" / "evaluation.md").read_text(encoding="utf-8")


def _cases(module: object) -> int:
    """The hand-made cases of a table module: every list of cases it defines."""
    return sum(
        len(value)
        for name, value in vars(module).items()
        if name.endswith(("_CASES", "_NO_VALUE", "_COMPLETIONS")) and isinstance(value, list)
    )


@pytest.mark.parametrize(
    ("file", "module"),
    [
        ("cases_teval.py", cases_teval),
        ("cases_ultratool.py", cases_ultratool),
        ("cases_tooleyes.py", cases_tooleyes),
    ],
)
def test_the_case_counts_the_doc_gives_are_the_tables(file: str, module: object) -> None:
    found = re.search(rf"`{re.escape(file)}` \((\d+) cases", DOC)
    assert found is not None, f"docs/evaluation.md does not count {file}'s cases"
    assert int(found[1]) == _cases(module)


def test_the_refused_huge_power_is_listed_as_not_reproduced() -> None:
    """python_expr refuses 2 ** 20000, which Python's eval computes: a departure the doc lists
    under "Not reproduced", with the limits the code has."""
    assert (2**20000).bit_length() == 20001  # eval computes it
    with pytest.raises(python_expr.Refused):
        python_expr.evaluate("2 ** 20000")
    start = DOC.index("**Not reproduced, and why:**")
    listed = DOC[start : DOC.index("**How exactness is checked**")]
    assert "`2 ** 20000`" in listed
    for limit in (python_expr.MAX_EXPONENT, python_expr.MAX_SHIFT, python_expr.MAX_ITEMS):
        assert f"{limit:,}" in listed
