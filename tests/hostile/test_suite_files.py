"""Hardening, round two (issue 27): what a careless or hostile user does to a suite's files.

Each test is named for its item of the issue (item N is test number 21 + N)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mock_tools import MockToolsError
from mock_tools.__main__ import main as mock_tools_main
from mock_tools.models import Provenance, Recording, Response
from mock_tools.overlay import OverlayStore
from mock_tools.serving import ServeOptions, build_service
from sandbox.cli import main as sandbox_main
from tests.hostile.conftest import MINI


def _suite_with_overlay(tmp_path: Path) -> Path:
    """A copy of the mini suite whose overlay holds one answer the suite does not record."""
    suite = tmp_path / "suite"
    shutil.copytree(MINI, suite)
    overlay = OverlayStore(suite / "overlay.sqlite")
    rec = Recording(
        tool="shipping",
        api="track_parcel",
        args={"parcel_id": "PX-777"},
        response=Response(body={"status": "lost"}),
        provenance=Provenance(source="simulated"),
    )
    overlay.put(rec.tool, rec.api, '{"parcel_id":"PX-777"}', rec.response, rec.provenance)
    overlay.close()
    return suite


@pytest.mark.parametrize(
    "name",
    [
        "../../escape_freeze.jsonl",
        "../escape.jsonl",
        "a/b/c.jsonl",
        "{tmp}/absolute.jsonl",  # an absolute path (under the test's own folder)
        ".hidden.jsonl",
        "..",
        "frozen.txt",
        "",
        "x" * 300 + ".jsonl",
        "frozen.jsonl\n",
    ],
)
def test_22_freeze_name_is_a_file_name_inside_the_recordings_folder(
    name: str, tmp_path: Path, capsys
) -> None:
    """`suite freeze --name` takes a plain `*.jsonl` file name: a path that climbs out of the
    suite, a subfolder the loader would ignore, a hidden or non-JSONL name is a one-line usage
    error (exit 2) and nothing is written anywhere."""
    suite = _suite_with_overlay(tmp_path)
    name = name.replace("{tmp}", str(tmp_path))
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    code = sandbox_main(["suite", "freeze", str(suite), "--name", name])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert "--name" in err and (".jsonl" in err or "is empty" in err)  # "": refused as read
    # the overlay's -wal and -shm files may come and go; no other file may appear
    after = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert [p for p in after if p not in before and "overlay" not in p.name] == []


def test_22_a_plain_name_freezes_into_the_recordings_folder(tmp_path: Path, capsys) -> None:
    """The accepted form still works: the file lands in `recordings/` and a second freeze
    finds everything recorded already."""
    suite = _suite_with_overlay(tmp_path)
    assert sandbox_main(["suite", "freeze", str(suite), "--name", "batch-1.jsonl"]) == 0
    assert (suite / "recordings" / "batch-1.jsonl").is_file()
    capsys.readouterr()
    assert sandbox_main(["suite", "freeze", str(suite), "--name", "batch-2.jsonl"]) == 0
    assert '"written": 0' in capsys.readouterr().out
    assert not (suite / "recordings" / "batch-2.jsonl").exists()


# -- item 10: validate on a YAML alias bomb, and on a suite that does not load ------------------


def _mini(tmp_path: Path, name: str = "suite") -> Path:
    suite = tmp_path / name
    shutil.copytree(MINI, suite, ignore=shutil.ignore_patterns(".cache"))
    return suite


ALIAS_BOMB = "\n".join(
    [
        "- id: bomb",
        "  query: Explode.",
        "  tools: [{tool: shipping, api: track_parcel}]",
        "  reference:",
        "    steps:",
        "      - tool: shipping",
        "        api: track_parcel",
        "        args:",
        '          a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
        *(f"          a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 6)),
        "",
    ]
)


def test_31_a_yaml_alias_bomb_is_one_short_error_naming_file_line_and_limit(
    tmp_path: Path, capsys
) -> None:
    """Six lines of aliases that expand to 9^6 (531,441) values are refused when the file is read
    (limit `yaml_expansion`), in one short line naming the file and the line, instead of being
    expanded while checking (16 s and a 69 MB error line on the code before the fix)."""
    suite = _mini(tmp_path)
    (suite / "tasks" / "bomb.yaml").write_text(ALIAS_BOMB)
    assert mock_tools_main(["validate", str(suite)]) == 1
    out = capsys.readouterr().out
    assert len(out) < 2_000, f"{len(out)} characters"
    assert "bomb.yaml:" in out and "yaml_expansion" in out
    assert "does not load" in out and "0 tools" not in out
    assert sandbox_main(["run", "--suite", str(suite), "--out", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "yaml_expansion" in err and len(err) < 2_000


def test_31_a_suite_that_does_not_load_reports_no_counts(tmp_path: Path, capsys) -> None:
    """A file that does not load makes the whole suite unreadable: the report says so instead
    of claiming 0 tools, 0 apis, 0 tasks, 0 recordings; --json gives null counts."""
    suite = _mini(tmp_path)
    (suite / "tools" / "shop.yaml").write_text("name: shop\napis: [\n")
    assert mock_tools_main(["validate", str(suite)]) == 1
    first, error = capsys.readouterr().out.splitlines()
    assert first == f"suite ({suite}): does not load: 1 error(s)", first
    assert "shop.yaml:" in error and "invalid YAML" in error
    assert mock_tools_main(["validate", str(suite), "--json"]) == 1
    (report,) = json.loads(capsys.readouterr().out)
    assert report["loaded"] is False and report["tools"] is None and report["tasks"] is None


# -- item 11: one set of checks for validate, run and serve --------------------------------------


def _duplicate_key(suite: Path) -> str:
    tasks = suite / "tasks" / "tasks.yaml"
    text = tasks.read_text()
    tasks.write_text(text.replace("  group: G1\n", "  group: G1\n  id: renamed_by_yaml\n", 1))
    return "duplicate key 'id'"


def _bad_schema_type(suite: Path) -> str:
    tools = suite / "tools" / "shipping.yaml"
    tools.write_text(
        tools.read_text().replace(
            "{type: string, description: Parcel", "{type: 3, description: Parcel"
        )
    )
    return "invalid parameters schema"


def _invalid_provenance(suite: Path) -> str:
    rec = suite / "recordings" / "shipping.jsonl"
    rec.write_text(rec.read_text().replace('"source": "hand"', '"source": "made-up"', 1))
    return "provenance.source"


def _task_without_tools(suite: Path) -> str:
    tasks = suite / "tasks" / "tasks.yaml"
    lines = tasks.read_text().split("\n")
    start = lines.index("  tools:")
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("    -"))
    tasks.write_text("\n".join([*lines[:start], "  tools: []", *lines[end:]]))
    return "offers no APIs"


def _symlink_loop(suite: Path) -> str:
    (suite / "recordings" / "loop.jsonl").symlink_to("loop.jsonl")
    return "symlink loop"


def _group_g9(suite: Path) -> str:
    tasks = suite / "tasks" / "tasks.yaml"
    tasks.write_text(tasks.read_text().replace("group: G2", "group: G9", 1))
    return "'G9'"


DEFECTS = [
    _duplicate_key,
    _bad_schema_type,
    _invalid_provenance,
    _task_without_tools,
    _symlink_loop,
    _group_g9,
]


@pytest.mark.parametrize("defect", DEFECTS, ids=lambda f: f.__name__.strip("_"))
def test_32_run_and_serve_refuse_every_suite_validate_rejects(
    defect, tmp_path: Path, capsys
) -> None:
    """Duplicate YAML keys (YAML would silently keep the last: a renamed task), an invalid schema
    type, an invalid provenance, a task offering no tools, a symlink loop in recordings/ and a
    group `G9`: `validate` rejects each with the reason, and `run` and `serve` refuse the same
    suite in one line (exit 2) before anything runs: one loader, one set of checks."""
    suite = _mini(tmp_path)
    reason = defect(suite)
    assert mock_tools_main(["validate", str(suite)]) == 1
    assert reason in capsys.readouterr().out
    runs = tmp_path / "runs"
    args = ["run", "--suite", str(suite), "--model", "reference", "--out", str(runs)]
    assert sandbox_main([*args, "--no-plots"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and reason in err, err
    assert not runs.exists() or not any(runs.iterdir())
    with pytest.raises(MockToolsError) as e:
        build_service(ServeOptions(suite=str(suite)))
    assert reason in str(e.value)


# -- the suite property test: any mutation, validate and run agree ------------------------------

SUITE_FILES = sorted(
    str(p.relative_to(MINI))
    for p in MINI.rglob("*")
    if p.is_file() and ".cache" not in p.relative_to(MINI).parts
)
TOKENS = [
    "\n",
    " ",
    "  ",
    ":",
    "- ",
    "[",
    "]",
    "{",
    "}",
    ",",
    '"',
    "'",
    "&a ",
    "*a",
    "<<: ",
    "id: ",
    "tools: []",
    "group: G9",
    "group: G2",
    "type: 3",
    "null",
    "NaN",
    "1e999",
    "-1",
    "\t",
    "\\u0000",
    "é",
    "\x00",
    "source: nowhere",
    '"occurrence": 0',
]


@st.composite
def _mutation(draw: st.DrawFn) -> tuple[str, bytes]:
    """One file of the mini suite, mutated: a span cut, a token or random text put in, a line
    doubled, dropped or moved."""
    name = draw(st.sampled_from(SUITE_FILES))
    data = (MINI / name).read_bytes()
    lines = data.split(b"\n")
    kind = draw(st.sampled_from(["cut", "insert", "double", "drop", "move", "replace"]))
    at = draw(st.integers(0, len(data)))
    if kind == "cut":
        data = data[:at] + data[at + draw(st.integers(1, 40)) :]
    elif kind == "insert":
        text = draw(st.one_of(st.sampled_from(TOKENS), st.text(max_size=12)))
        data = data[:at] + text.encode("utf-8", "surrogatepass") + data[at:]
    elif kind == "replace":
        token = draw(st.sampled_from(TOKENS)).encode()
        data = data[:at] + token + data[at + len(token) :]
    else:
        i = draw(st.integers(0, len(lines) - 1))
        j = draw(st.integers(0, len(lines) - 1))
        line = lines[i]
        if kind == "double":
            lines.insert(j, line)
        elif kind == "drop":
            del lines[i]
        else:
            del lines[i]
            lines.insert(j, line)
        data = b"\n".join(lines)
    return name, data


def _one_error_line(err: str) -> bool:
    lines = err.splitlines()
    return "Traceback" not in err and len(lines) == 1 and lines[0].startswith("error: ")


@settings(
    max_examples=int(os.environ.get("SUITE_MUTATIONS", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(mutation=_mutation())
def test_32_validate_and_run_agree_on_any_mutation_of_a_suite_file(mutation, capsys) -> None:
    """Whatever one edit does to one file of a valid suite, `validate` and `run` agree: both
    accept it, or both reject it (validate exit 1, run exit 2 with one `error:` line, no
    traceback). The one case where run refuses a suite validate accepts is a suite left with no
    task to run, and that is one line too."""
    name, data = mutation
    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp) / "suite"
        shutil.copytree(MINI, suite, ignore=shutil.ignore_patterns(".cache"))
        (suite / name).write_bytes(data)
        capsys.readouterr()
        valid = mock_tools_main(["validate", str(suite)])
        report = capsys.readouterr().out
        assert valid in (0, 1) and "Traceback" not in report
        runs = Path(tmp) / "runs"
        code = sandbox_main(
            ["run", "--suite", str(suite), "--model", "reference", "--json", "--no-plots"]
            + ["--out", str(runs), "--concurrency", "1"]
        )
        err = capsys.readouterr().err
        event(f"{name}: validate {'accepts' if valid == 0 else 'rejects'}")
        if valid == 0:
            no_tasks = "0 tasks" in report.splitlines()[0]
            if no_tasks:
                assert code == 2 and _one_error_line(err), (name, err)
            else:
                assert code == 0, (name, report, err)
        else:
            assert code == 2 and _one_error_line(err), (name, report, err)
            assert not runs.exists() or not any(runs.iterdir())


def test_parameters_whose_properties_are_no_object_are_reported_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by test_32 (a token written over a tool's `properties`): loading the suite built
    the recording index with the broken schema and crashed with a traceback. Now `validate`
    names the API and the rule, and `run` refuses the suite in one line."""
    suite = tmp_path / "suite"
    shutil.copytree(MINI, suite, ignore=shutil.ignore_patterns(".cache"))
    tools = suite / "tools" / "shipping.yaml"
    text = tools.read_text()
    declared = "      properties:\n        parcel_id: {type: string, description: Parcel id, "
    declared += "e.g. PX-100.}\n"
    assert declared in text
    tools.write_text(text.replace(declared, '      properties: "oops"\n', 1))
    capsys.readouterr()
    assert mock_tools_main(["validate", str(suite)]) == 1
    report = capsys.readouterr().out
    assert (
        "shipping/track_parcel: invalid parameters schema: 'oops' is not of type 'object'" in report
    )
    code = sandbox_main(
        ["run", "--suite", str(suite), "--model", "reference", "--no-plots"]
        + ["--out", str(tmp_path / "runs")]
    )
    err = capsys.readouterr().err
    assert code == 2 and _one_error_line(err), err
    assert "shipping/track_parcel: invalid parameters schema" in err


def test_a_control_character_in_a_recorded_name_is_shown_escaped_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by test_32 (random text put into a recording): a tool name holding U+0085, a line
    break to `str.splitlines` and to some terminals, was printed raw, so the one-line error
    became two. Names are shown with such characters escaped, in `validate`'s report and in
    `run`'s error, and the message still names the API."""
    suite = tmp_path / "suite"
    shutil.copytree(MINI, suite, ignore=shutil.ignore_patterns(".cache"))
    recordings = suite / "recordings" / "shipping.jsonl"
    text = recordings.read_text()
    assert '"tool": "shipping"' in text
    recordings.write_text(text.replace('"tool": "shipping"', '"tool": "\\u0085\\u001bshipping"', 1))
    capsys.readouterr()
    assert mock_tools_main(["validate", str(suite)]) == 1
    report = capsys.readouterr().out
    assert "\x85" not in report and "\x1b" not in report
    assert "\\x85\\x1bshipping/" in report
    out = ["--out", str(tmp_path / "runs")]
    code = sandbox_main(["run", "--suite", str(suite), "--model", "reference", "--no-plots", *out])
    err = capsys.readouterr().err
    assert code == 2 and _one_error_line(err), err
    assert "\\x85\\x1bshipping/" in err and "no such API in the catalog" in err


def test_shown_escapes_what_breaks_a_line_or_drives_a_terminal_and_keeps_the_rest() -> None:
    from mock_tools.terminal_text import shown

    assert shown("plain text, é, 名前") == "plain text, é, 名前"
    assert shown("two\nlines\tand a tab") == "two\nlines\tand a tab"
    assert shown("a\rb\x0bc\x0cd\x1be\x85f\u2028g\u2029h\x00") == (
        "a\\x0db\\x0bc\\x0cd\\x1be\\x85f\\u2028g\\u2029h\\x00"
    )
    assert shown("\U000e0001") == "\\U000e0001"
