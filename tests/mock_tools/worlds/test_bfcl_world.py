"""BFCL's API classes as a world: reading a copy of bfcl-eval (wheel, unpacked, the package
folder), its instances as JSON records that are equal when BFCL's checker finds them equal, and
calls answered as BFCL's executor answers them. The copy is the tests' hand-made one
(tests/fixtures/bfcl/copy: a notebook class and a stateless counter in BFCL's layout)."""

from __future__ import annotations

import datetime
import random
import shutil
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from mock_tools.canonical import canonical_args
from mock_tools.worlds.bfcl import (
    BfclEngine,
    BfclSource,
    BfclSourceError,
    BfclState,
    bfcl_result_text,
    instance_records,
    load_bfcl_engine,
    long_context,
    offered_function,
)
from mock_tools.worlds.errors import WorldDefinitionError
from mock_tools.worlds.task import TaskWorld
from mock_tools.worlds.world import DEFAULT_NOW, parse_clock

COPY = Path(__file__).resolve().parents[2] / "fixtures" / "bfcl" / "copy"
NOW = parse_clock(DEFAULT_NOW, "test")


def _wheel(tmp_path: Path, version: str = "0.0.1") -> Path:
    wheel = tmp_path / f"bfcl_eval-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for f in sorted(COPY.rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts:
                z.write(f, str(f.relative_to(COPY)))
    return wheel


def _engine() -> BfclEngine:
    return BfclEngine(BfclSource.open(COPY), ["NoteBook", "Counter"])


def _initial(engine: BfclEngine, task: str = "multi_turn_base_0") -> BfclState:
    spec = TaskWorld(state={"NoteBook": {"owner": "ada", "pages": {"plan": "go"}}, "Counter": {}})
    state = engine.initial(task, spec)
    assert isinstance(state, BfclState)
    return state


def _call(engine: BfclEngine, state: Any, tool: str, **args: Any) -> Any:
    return engine.execute(state, tool, args, key="", now=NOW, task="multi_turn_base_0")


# -- the copy -------------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["folder", "package", "wheel"])
def test_a_copy_is_read_from_a_wheel_an_unpacked_folder_or_the_package_folder(
    tmp_path: Path, form: str
) -> None:
    given = {"folder": COPY, "package": COPY / "bfcl_eval", "wheel": _wheel(tmp_path)}[form]
    src = BfclSource.open(given)
    assert (src.version, src.prefix) == ("0.0.1", "BFCL_v4")
    assert src.modules["NoteBook"].endswith("func_source_code.note_book")
    assert src.stateless == frozenset({"Counter"})
    classes = src.load_classes(["NoteBook"])
    assert classes["NoteBook"].__name__ == "NoteBook"


def test_loading_the_classes_leaves_nothing_of_bfcl_importable() -> None:
    BfclSource.open(COPY).load_classes(["NoteBook", "Counter"])
    assert not [m for m in sys.modules if m == "bfcl_eval" or m.startswith("bfcl_eval.")]
    assert str(COPY) not in sys.path


def test_a_folder_without_bfcls_layout_is_named(tmp_path: Path) -> None:
    with pytest.raises(BfclSourceError, match="no bfcl_eval/ folder"):
        BfclSource.open(tmp_path)
    other = Path(shutil.copytree(COPY, tmp_path / "other"))
    (other / "bfcl_eval" / "constants" / "executable_backend_config.py").unlink()
    with pytest.raises(BfclSourceError, match="not BFCL's layout .*executable_backend_config"):
        BfclSource.open(other)
    moved = Path(shutil.copytree(COPY, tmp_path / "moved"))
    config = moved / "bfcl_eval" / "constants" / "executable_backend_config.py"
    config.write_text(config.read_text().replace("CLASS_FILE_PATH_MAPPING", "CLASS_MODULES"))
    with pytest.raises(BfclSourceError, match="lacks CLASS_FILE_PATH_MAPPING"):
        BfclSource.open(moved)


def test_a_file_that_is_no_wheel_is_named(tmp_path: Path) -> None:
    f = tmp_path / "bfcl.whl"
    f.write_text("not a zip")
    with pytest.raises(BfclSourceError, match="not a wheel"):
        BfclSource.open(f)


def test_an_unknown_class_is_named_with_the_known_ones() -> None:
    src = BfclSource.open(COPY)
    assert "unknown API class 'Shop'" in (src.check_class("Shop") or "")
    assert "Counter, NoteBook" in (src.check_class("Shop") or "")
    with pytest.raises(BfclSourceError, match="Shop"):
        src.load_classes(["Shop"])


def test_the_digest_follows_the_classes_code_and_a_changed_copy_is_refused(
    tmp_path: Path,
) -> None:
    copy = Path(shutil.copytree(COPY, tmp_path / "copy"))
    src = BfclSource.open(copy)
    digest = src.digest(["NoteBook"])
    load_bfcl_engine(str(copy), ["NoteBook"], version="0.0.1", digest=digest)
    module = copy / src.module_file("NoteBook")
    module.write_text(module.read_text().replace("page {title} exists", "page {title} is there"))
    assert BfclSource.open(copy).digest(["NoteBook"]) != digest
    with pytest.raises(WorldDefinitionError, match="changed since the import"):
        load_bfcl_engine(str(copy), ["NoteBook"], version="0.0.1", digest=digest)
    with pytest.raises(WorldDefinitionError, match="is bfcl-eval 0.0.1, the suite was imported"):
        load_bfcl_engine(str(copy), ["NoteBook"], version="2026.3.23")


# -- functions ------------------------------------------------------------------------------------


def test_functions_are_offered_as_bfcls_openai_handler_offers_them() -> None:
    doc = BfclSource.open(COPY).function_docs("Counter")[0]
    name, description, params = offered_function(doc)
    assert name == "count_words"
    assert description == (
        "Count the words of a text. Note that the provided function is in Python 3 syntax."
    )
    assert params["type"] == "object"
    ratio = params["properties"]["ratio"]
    assert (ratio["type"], ratio["format"]) == ("number", "float")
    assert ratio["description"] == "Unused. This is a float type value."
    assert params["properties"]["words"]["items"]["type"] == "number"
    assert params["required"] == ["text"]
    assert doc["parameters"]["type"] == "dict"  # the doc itself is left as it was


def test_bfcl_functions_take_their_arguments_as_given() -> None:
    _, _, params = offered_function(BfclSource.open(COPY).function_docs("Counter")[0])
    given = {"text": "  two words ", "ratio": "5", "words": None}
    assert canonical_args(given, params) == given


# -- state records --------------------------------------------------------------------------------


class _Thing:
    def __init__(self, **attrs: Any) -> None:
        self.__dict__.update(attrs)


def _public(**attrs: Any) -> dict[str, Any]:
    return instance_records(_Thing(**attrs))[0]


def test_records_are_equal_when_pythons_equality_says_so() -> None:
    assert _public(n=1) == _public(n=1.0)
    assert _public(d={"a": 1, "b": 2}) == _public(d={"b": 2, "a": 1})
    assert _public(s={3, 1, 2}) == _public(s={2, 3, 1})
    assert _public(t=(1, 2)) != _public(t=[1, 2])
    assert _public(k={1: "x"}) != _public(k={"1": "x"})
    assert _public(n=1.5) != _public(n=1)
    assert _public(x=None) == {}


def test_an_object_is_its_public_attributes_and_a_cycle_ends_in_a_reference() -> None:
    parent = _Thing(name="/", contents={})
    child = _Thing(name="a", parent=parent, _seen=datetime.datetime.now())
    parent.contents["a"] = child
    public, private = instance_records(_Thing(root=parent, _current=child))
    assert public["root"] == {
        "$class": "_Thing",
        "name": "/",
        "contents": {"a": {"$class": "_Thing", "name": "a", "parent": {"$ref": "root"}}},
    }
    assert private["_current"] == {"$ref": "root.contents.a"}


def test_a_generators_position_is_part_of_the_private_records() -> None:
    a, b = random.Random(1), random.Random(1)
    b.random()
    assert instance_records(_Thing(_random=a))[1] != instance_records(_Thing(_random=b))[1]


def test_results_are_bfcls_execution_texts() -> None:
    assert bfcl_result_text("as is") == "as is"
    assert bfcl_result_text({"b": 1, "a": "é"}) == '{"b": 1, "a": "\\u00e9"}'
    assert bfcl_result_text([1, "x"]) == "[1, 'x']"
    assert bfcl_result_text(None) == "None"
    assert bfcl_result_text({"x": {1, 2}}) == "{'x': {1, 2}}"


def test_long_context_follows_the_entrys_category() -> None:
    assert long_context("multi_turn_long_context_3")
    assert not long_context("multi_turn_base_3")
    assert not long_context(None)


# -- the engine -----------------------------------------------------------------------------------


def test_the_initial_state_is_the_loaded_instances_records() -> None:
    engine = _engine()
    state = _initial(engine)
    assert set(state.instances) == {"NoteBook", "Counter"}
    assert state.get("NoteBook", "owner") == "ada"
    assert state.get("NoteBook", "pages")["plan"]["text"] == "go"
    assert state.get("NoteBook", "long_context") is False
    assert state.get("_NoteBook", "_cursor") is None  # None: no record
    assert _initial(engine) is state  # made once per task
    long = engine.initial("multi_turn_long_context_0", TaskWorld(state={"NoteBook": {}}))
    assert long.get("NoteBook", "long_context") is True


def test_a_call_answers_bfcls_text_and_leaves_the_earlier_state_as_it_was() -> None:
    engine = _engine()
    state = _initial(engine)
    answer = _call(engine, state, "add_note", title="todo", text="milk")
    assert answer.ok and answer.body == '{"added": "todo", "pages": "2"}'
    assert answer.answer_text() == answer.body
    assert "todo" in answer.state.get("NoteBook", "pages")
    assert "todo" not in state.get("NoteBook", "pages")
    assert "todo" not in state.instances["NoteBook"].pages
    assert [c.collection for c in answer.changes] == ["NoteBook"]
    again = _call(engine, state, "add_note", title="todo", text="milk")
    assert again.state.hash == answer.state.hash


def test_a_private_change_moves_the_hash_but_not_the_data_hash() -> None:
    engine = _engine()
    state = _initial(engine)
    moved = _call(engine, state, "read_note", title="plan").state
    assert moved.hash != state.hash
    assert moved.data_hash == state.data_hash


def test_a_call_that_raises_is_bfcls_error_text_and_keeps_what_it_did() -> None:
    engine = _engine()
    state = _initial(engine)
    failed = _call(engine, state, "tag", label="")
    assert not failed.ok
    assert failed.error == "Error during execution: an empty label"
    assert failed.answer_text() == failed.error
    assert failed.state.get("NoteBook", "tags") == [""]
    missing = _call(engine, state, "delete_note", title="nope")
    assert missing.error == "Error during execution: 'nope'"
    wrong = _call(engine, state, "read_note", name="plan")
    assert "unexpected keyword argument 'name'" in wrong.error


def test_a_function_of_a_class_the_task_does_not_involve_is_not_defined() -> None:
    engine = _engine()
    only_notes = engine.initial("multi_turn_base_9", TaskWorld(state={"NoteBook": {}}))
    answer = _call(engine, only_notes, "count_words", text="a b")
    assert answer.error == "Error during execution: name 'count_words' is not defined"
    assert answer.state is only_notes


def test_a_stateless_class_is_not_loaded_and_answers() -> None:
    engine = _engine()
    answer = _call(engine, _initial(engine), "count_words", text="one two three")
    assert answer.ok and answer.body == "3"


def test_an_unknown_class_in_a_tasks_config_is_a_definition_error() -> None:
    engine = _engine()
    with pytest.raises(WorldDefinitionError, match="names API class 'Shop'"):
        engine.initial("multi_turn_base_5", TaskWorld(state={"Shop": {}}))


def test_a_config_the_class_cannot_load_is_a_definition_error() -> None:
    engine = _engine()
    with pytest.raises(WorldDefinitionError, match="NoteBook does not load its initial config"):
        engine.initial("multi_turn_base_6", TaskWorld(state={"NoteBook": {"pages": [1]}}))


def test_the_world_offers_the_classes_functions_in_bfcls_order() -> None:
    engine = _engine()
    assert engine.functions_of(["Counter", "NoteBook"]) == [
        "count_words",
        "add_note",
        "read_note",
        "delete_note",
        "tag",
    ]
    spec = engine.tool_spec()
    assert spec.name == "bfcl" and len(spec.apis) == 5
    assert engine.kind("tag") == "write" and engine.kind("nope") is None
