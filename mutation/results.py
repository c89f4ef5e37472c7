"""What a mutmut run found, per module: mutants killed, survived, equivalent; the score.

mutmut keeps one exit code per mutant in ``mutants/<module path>.meta``. A mutant is *killed*
when a test failed (or timed out, or crashed) with it, or when mypy rejects it (``make lint``
runs mypy, so such a change cannot land); it *survived* when its tests passed or no test runs
its function. A survivor listed in ``mutation.equivalents`` (matched on its function and the
exact lines it changes) is *equivalent*: it changes no behaviour, so it counts on neither side.
The score is killed / (killed + survived - equivalent).
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from mutmut.mutation.diff_apply import get_diff_for_mutant
from mutmut.stats import status_by_exit_code

from mutation.equivalents import EQUIVALENTS, Equivalent, matching
from mutation.modules import module_path

__all__ = ["GOAL", "ModuleScore", "Survivor", "mutant_names", "read_module"]

GOAL = 0.90
"""The share of mutants each core module's tests must kill."""

_KILLED = {"killed", "timeout", "segfault"}
_TYPE_CHECK = {"caught by type check"}
_SURVIVED = {"survived", "no tests", "suspicious"}


@dataclass(frozen=True)
class Survivor:
    name: str
    """mutmut's name of the mutant (``agents.dfsdt.xǁ_Searchǁexpand__mutmut_36``)."""
    function: str
    """The function it mutates, as written (``_Search.expand``)."""
    removed: tuple[str, ...]
    added: tuple[str, ...]
    no_tests: bool = False
    """No test of the selection runs its function."""

    def describe(self) -> str:
        change = " / ".join(self.removed) + "  ->  " + " / ".join(self.added)
        return f"{self.function}: {change}" + ("  (no test runs it)" if self.no_tests else "")


@dataclass
class ModuleScore:
    module: str
    killed: int = 0
    caught_by_mypy: int = 0
    survivors: list[Survivor] = field(default_factory=list)
    equivalent: list[tuple[Survivor, Equivalent]] = field(default_factory=list)
    not_checked: int = 0

    @property
    def mutants(self) -> int:
        checked = self.killed + self.caught_by_mypy + len(self.survivors) + len(self.equivalent)
        return checked + self.not_checked

    @property
    def score(self) -> float | None:
        """Killed share of the mutants that count; None when none does."""
        counted = self.killed + self.caught_by_mypy + len(self.survivors)
        return (self.killed + self.caught_by_mypy) / counted if counted else None

    @property
    def meets_goal(self) -> bool:
        return self.score is None or self.score >= GOAL

    def to_json(self) -> dict[str, object]:
        return {
            "module": self.module,
            "mutants": self.mutants,
            "killed": self.killed,
            "caught_by_mypy": self.caught_by_mypy,
            "survived": len(self.survivors),
            "equivalent": len(self.equivalent),
            "not_checked": self.not_checked,
            "score": self.score,
            "survivors": [s.describe() for s in self.survivors],
        }


def display_name(mangled: str) -> str:
    """mutmut's mangled function name as written: ``xǁ_Searchǁexpand`` -> ``_Search.expand``."""
    if mangled.startswith("x\u01c1"):
        return mangled[2:].replace("\u01c1", ".")
    return mangled.removeprefix("x_")


@contextmanager
def _inside(folder: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _changed_lines(diff: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    body = [line for line in diff.splitlines()[2:] if not line.startswith("@@")]
    removed = tuple(line[1:].strip() for line in body if line.startswith("-"))
    added = tuple(line[1:].strip() for line in body if line.startswith("+"))
    return removed, added


def _survivor(name: str, path: Path, *, no_tests: bool) -> Survivor:
    mangled = name.rsplit(".", 1)[1].rsplit("__mutmut_", 1)[0]
    removed, added = _changed_lines(get_diff_for_mutant(name, path=path))
    return Survivor(name, display_name(mangled), removed, added, no_tests=no_tests)


def read_module(
    folder: Path,
    module: str,
    names: Sequence[str] = (),
    equivalents: Sequence[Equivalent] = EQUIVALENTS,
) -> ModuleScore:
    """The score of ``module`` from the results in a group's work folder (only of the mutants
    whose names match one of ``names``, when given)."""
    path = module_path(module)
    result = ModuleScore(module)
    meta = folder / "mutants" / f"{path}.meta"
    if not meta.exists():
        return result
    codes: dict[str, int | None] = json.loads(meta.read_text("utf-8"))["exit_code_by_key"]
    if names:
        codes = {k: v for k, v in codes.items() if any(fnmatch.fnmatch(k, n) for n in names)}
    with _inside(folder):
        for name, code in sorted(codes.items()):
            status = status_by_exit_code[code]
            if status in _KILLED:
                result.killed += 1
            elif status in _TYPE_CHECK:
                result.caught_by_mypy += 1
            elif status in _SURVIVED:
                survivor = _survivor(name, path, no_tests=status == "no tests")
                known = matching(module, survivor.function, survivor.removed, survivor.added)
                if known is not None and known in equivalents:
                    result.equivalent.append((survivor, known))
                else:
                    result.survivors.append(survivor)
            else:
                result.not_checked += 1
    return result


def retest_survivors(folder: Path, module: str) -> int:
    """Mark the survivors of ``module`` in a reused work folder as not checked, so the run tests
    them again against the tests as they are now (mutmut never re-tests a mutant that has a
    result); equivalent mutants, killed and mypy-caught ones keep their results. Returns how
    many were marked."""
    meta = folder / "mutants" / f"{module_path(module)}.meta"
    if not meta.exists():
        return 0
    return forget_results(meta, {s.name for s in read_module(folder, module).survivors})


def forget_results(meta: Path, names: set[str]) -> int:
    """Set the results of the mutants ``names`` in mutmut's ``meta`` file to not checked (the
    others keep theirs); returns how many of them it holds."""
    if not names:
        return 0
    data = json.loads(meta.read_text("utf-8"))
    codes = data["exit_code_by_key"]
    known = names & codes.keys()
    for name in known:
        codes[name] = None
    meta.write_text(json.dumps(data, indent=4), "utf-8")
    return len(known)


def mutant_names(folder: Path, module: str) -> list[str]:
    """The names of the mutants mutmut makes of ``module`` (with the settings of ``folder``)."""
    from mutmut.configuration import reset_config
    from mutmut.mutation.file_mutation import mutate_file_contents

    path = module_path(module)
    with _inside(folder):
        reset_config()
        made = mutate_file_contents(str(path), path.read_text("utf-8"), None, None)
        reset_config()
    return [f"{module}.{name}" for name in made.mutant_names]
