"""The mutation check's own promises: it covers the core modules the issue names, its
hand-written mutants still apply to the code, and a change is mapped to the functions it
touched."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from mutation.__main__ import main as mutation_main
from mutation.changed import change_base, importing_tests, touched_functions
from mutation.equivalents import Equivalent, matching
from mutation.hand import HAND_MUTANTS, HandMutant
from mutation.modules import GROUPS, module_path
from mutation.report import BEGIN, END, EQ_BEGIN, EQ_END, write_summary
from mutation.results import GOAL, ModuleScore, Survivor, display_name, forget_results

ROOT = Path(__file__).resolve().parents[2]


def test_every_core_module_exists_and_belongs_to_one_group() -> None:
    modules = [m for g in GROUPS for m in g.modules]
    assert len(modules) == len(set(modules))
    assert all((ROOT / module_path(m)).is_file() for m in modules), "a core module moved"
    for required in ("agents.dfsdt", "mock_tools.overlay", "sandbox.replay.replay"):
        assert required in modules
    assert all((ROOT / t.split("::")[0]).exists() for g in GROUPS for t in g.tests + g.deselect)


@pytest.mark.parametrize("mutant", HAND_MUTANTS, ids=lambda m: m.breaks)
def test_each_hand_written_mutant_still_applies_once_to_its_file(mutant: HandMutant) -> None:
    """Stale entries would check nothing: the text each replaces is in its file exactly once,
    and each test named to catch it is a test function of its file."""
    assert (ROOT / mutant.file).read_text(encoding="utf-8").count(mutant.before) == 1
    assert mutant.before != mutant.after
    for node in mutant.tests:
        path, name = node.split("::")
        source = (ROOT / path).read_text(encoding="utf-8")
        assert re.search(rf"^(async )?def {name}\(", source, re.MULTILINE), node


def test_mangled_names_read_as_written() -> None:
    assert display_name("x\u01c1_Search\u01c1expand") == "_Search.expand"
    assert display_name("x_finish_arguments") == "finish_arguments"


def test_the_score_leaves_equivalent_mutants_out_and_holds_the_goal() -> None:
    s = Survivor("m.x_f__mutmut_1", "f", ("a",), ("b",))
    score = ModuleScore("m", killed=8, caught_by_mypy=1, survivors=[s])
    assert score.score == pytest.approx(0.9) and score.meets_goal and score.mutants == 10
    e = Equivalent("m", "f", ("c",), ("d",), "same")
    score.equivalent.append((s, e))
    assert score.score == pytest.approx(0.9) and score.mutants == 11
    score.survivors.append(s)
    assert score.score == pytest.approx(9 / 11) and not score.meets_goal
    assert ModuleScore("empty").score is None and ModuleScore("empty").meets_goal
    assert GOAL == 0.9


def test_an_equivalent_entry_matches_only_its_exact_change() -> None:
    e = Equivalent("m", "f", ("x = 1",), ("x = 2",), "same")
    assert matching("m", "f", ["x = 1"], ["x = 2"], [e]) is e
    assert matching("m", "f", ["x = 1"], ["x = 3"], [e]) is None
    assert matching("m", "g", ["x = 1"], ["x = 2"], [e]) is None
    assert matching("n", "f", ["x = 1"], ["x = 2"], [e]) is None


def test_the_summary_rewrites_only_its_marked_sections_and_the_rows_measured(
    tmp_path: Path,
) -> None:
    """A run writes the rows of the modules it measured in full; the rows of other modules
    stay as an earlier run wrote them; a module cut short writes no row; the text outside the
    markers is never touched."""
    doc = tmp_path / "testing.md"
    doc.write_text(f"intro\n{BEGIN}\nold\n{END}\nmiddle\n{EQ_BEGIN}\nold\n{EQ_END}\nend\n")
    assert write_summary(doc, [ModuleScore("agents.dfsdt", killed=9, survivors=[])]) == [
        "agents.dfsdt"
    ]
    text = doc.read_text()
    assert text.startswith("intro\n") and "\nmiddle\n" in text and text.endswith("end\n")
    assert "\nold\n" not in text
    assert "| `agents.dfsdt` | 9 | 9 | 0 | 0 | 0 | 100.0% | " in text
    assert "Not measured yet: `agents.step`" in text
    survivor = Survivor("m.x_f__mutmut_1", "f", ("a",), ("b",))
    later = [
        ModuleScore("agents.step", killed=3, survivors=[survivor]),
        ModuleScore("mock_tools.overlay", killed=5, not_checked=4),
    ]
    assert write_summary(doc, later) == ["agents.step"]
    text = doc.read_text()
    assert "| `agents.dfsdt` | 9 | 9 | 0 | 0 | 0 | 100.0% | " in text  # kept
    assert "| `agents.step` | 4 | 3 | 0 | 1 | 0 | 75.0% | " in text
    assert text.index("`agents.step`") < text.index("`agents.dfsdt`")  # in the modules' order
    scores = text[text.index(BEGIN) : text.index(END)]
    assert "`mock_tools.overlay` |" not in scores and "`mock_tools.overlay`," in scores
    doc.write_text("no markers\n")
    with pytest.raises(ValueError, match="no '<!-- mutation-scores"):
        write_summary(doc, [])


def test_a_reused_run_tests_the_survivors_again_and_keeps_every_other_result(
    tmp_path: Path,
) -> None:
    """After tests were added, ``--reuse`` must not report a mutant those tests now kill as
    surviving: its survivors go back to not checked; killed, mypy-caught and unknown names
    stay as they were."""
    meta = tmp_path / "m.py.meta"
    codes = {
        "m.x_f__mutmut_1": 1,
        "m.x_f__mutmut_2": 0,
        "m.x_f__mutmut_3": 37,
        "m.x_g__mutmut_1": 0,
    }
    meta.write_text(json.dumps({"exit_code_by_key": codes, "durations_by_key": {}}))
    assert forget_results(meta, {"m.x_f__mutmut_2", "m.x_g__mutmut_1", "m.x_h__mutmut_9"}) == 2
    data = json.loads(meta.read_text())
    assert data["exit_code_by_key"] == {
        "m.x_f__mutmut_1": 1,
        "m.x_f__mutmut_2": None,
        "m.x_f__mutmut_3": 37,
        "m.x_g__mutmut_1": None,
    }
    assert data["durations_by_key"] == {}
    assert forget_results(meta, set()) == 0


def test_a_name_selects_a_group_a_module_or_refuses_to_guess() -> None:
    """``store`` is the store group (not also ``mock_tools.store``, a module of another group);
    a dotted name or an unambiguous last part is that module; a last part two modules share is
    refused naming both, so a run never drifts into a group nobody asked for."""
    from mutation.__main__ import _selected

    groups = _selected(["store"])
    assert [g.name for g in groups] == ["store"]
    assert all(m.startswith("sandbox.store.") for m in groups[0].modules)
    only = _selected(["mock_tools.store", "dfsdt"])
    assert [(g.name, g.modules) for g in only] == [
        ("agents", ("agents.dfsdt",)),
        ("mock_tools", ("mock_tools.store",)),
    ]
    with pytest.raises(SystemExit, match="'selection' names .*steps.selection.*store.selection"):
        _selected(["selection"])
    with pytest.raises(SystemExit, match="'nothing' is no core group or module"):
        _selected(["nothing"])


def test_saved_scores_write_the_same_rows_as_the_run_that_saved_them(tmp_path: Path) -> None:
    """Engineers measuring modules in their own checkouts record the rows here from the files
    their runs saved (``--json``), without running the mutants again: the same rows the runs
    would have written; a module cut short writes none; a module below the goal exits 1."""
    survivor = Survivor("m.x_f__mutmut_1", "f", ("a",), ("b",))
    scores = [
        ModuleScore("agents.step", killed=3, caught_by_mypy=6, survivors=[survivor]),
        ModuleScore("agents.dfsdt", killed=5, not_checked=4),
    ]
    saved = tmp_path / "scores.json"
    saved.write_text(json.dumps([m.to_json() for m in scores]))
    by_run, from_file = tmp_path / "run.md", tmp_path / "saved.md"
    for doc in (by_run, from_file):
        doc.write_text(f"{BEGIN}\n{END}\n{EQ_BEGIN}\n{EQ_END}\n")
    write_summary(by_run, scores)
    assert mutation_main(["--from-json", str(saved), "--summary", str(from_file)]) == 0
    assert from_file.read_text() == by_run.read_text()
    assert "| `agents.step` | 10 | 3 | 6 | 1 | 0 | 90.0% | " in from_file.read_text()
    assert "`agents.dfsdt` |" not in from_file.read_text()
    low = [ModuleScore("agents.react", killed=1, survivors=[survivor])]
    saved.write_text(json.dumps([m.to_json() for m in low]))
    assert mutation_main(["--from-json", str(saved), "--summary", str(from_file)]) == 1
    assert "| `agents.react` | 2 | 1 | 0 | 1 | 0 | 50.0% | " in from_file.read_text()
    assert mutation_main(["--from-json", str(saved)]) == 2  # nowhere to write


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def test_a_change_is_mapped_to_the_functions_and_methods_it_touched(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "agents").mkdir(parents=True)
    source = repo / "agents" / "accounting.py"
    source.write_text(
        "def one():\n    return 1\n\n\n"
        "class Acc:\n    def spent(self):\n        return 2\n\n    def left(self):\n"
        "        return 3\n\n\n"
        "def helper():\n    def inner():\n        return 4\n    return inner\n"
    )
    _git(repo, "init", "-q")
    _git(
        repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "base", "--allow-empty"
    )
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "add")
    base = change_base(repo)  # on its own main line: the last commit is the change
    assert base is not None
    everything = touched_functions(repo, base)["agents.accounting"]
    assert len(everything) == 4  # a new file: all of it
    text = source.read_text().replace("return 2", "return 20").replace("return 4", "return 40")
    source.write_text(text)
    touched = touched_functions(repo, change_base(repo, "HEAD") or "")
    assert touched == {
        "agents.accounting": [
            "agents.accounting.x\u01c1Acc\u01c1spent__mutmut_*",
            "agents.accounting.x_helper__mutmut_*",
        ]
    }


def test_ci_starts_from_the_tests_that_import_a_changed_module(tmp_path: Path) -> None:
    """The bounded check's selection: test files of the group that import the module itself,
    in any form, or its package when the package re-exports it; deselected files left out."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from pkg.core import run\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "__init__.py").write_text("")
    tests = tmp_path / "tests"
    (tests / "deep").mkdir(parents=True)
    files = {
        "test_from.py": "from pkg.core import run\n",
        "test_import.py": "import pkg.core\n",
        "test_module.py": "from pkg import core\n",
        "test_package.py": "from pkg import run\n",
        "deep/test_nested.py": "def test():\n    from pkg.core import run\n",
        "test_unrelated.py": "from pkg.other import x\nimport pkg\n",
        "test_left_out.py": "from pkg.core import run\n",
        "helper.py": "from pkg.core import run\n",
    }
    for name, text in files.items():
        (tests / name).write_text(text)
    found = importing_tests(tmp_path, ["tests"], ["tests/test_left_out.py"], ["pkg.core"])
    assert sorted(found) == [
        "tests/deep/test_nested.py",
        "tests/test_from.py",
        "tests/test_import.py",
        "tests/test_module.py",
        "tests/test_package.py",
    ]
    assert importing_tests(tmp_path, ["tests/test_from.py"], [], ["pkg.other"]) == ()
    (tmp_path / "pkg" / "__init__.py").write_text("")  # no longer re-exported
    assert "tests/test_package.py" not in importing_tests(tmp_path, ["tests"], [], ["pkg.core"])
