"""A settings model as the command line and the records see it: each leaf setting by its dotted
path, the flag derived from its field (or the one it names), which settings are secret and
recorded redacted, and copies or reads by dotted path."""

from __future__ import annotations

import json
from typing import Annotated, Any, ClassVar

import pytest
from pydantic import BaseModel, Field

from sandbox.store.setting import (
    SECRET,
    Flag,
    OptionalSecretText,
    SecretOptions,
    SecretText,
    flag_of,
    hidden_parts,
    is_secret,
    is_section,
    secret_paths,
    setting_fields,
    unwrap_optional,
    value_at,
    with_values,
)


class _Base(BaseModel):
    inherited: int = 0


class _Engine(_Base):
    FLAGS: ClassVar[dict[str, Flag]] = {"inherited": Flag(metavar="N")}

    name: str = "e"
    options: dict[str, Any] = Field(default_factory=dict)
    extra_flags: dict[str, int] | None = None
    url: OptionalSecretText = None
    timeout: Annotated[float | None, Flag(name="--engine-timeout", short="-t")] = None


class _Settings(BaseModel):
    name: str = "top"
    engine: _Engine = Field(default_factory=_Engine)
    key: SecretText = "k"
    tags: list[str] = Field(default_factory=list)
    task_settings: dict[str, int] = Field(default_factory=dict)


def test_every_leaf_setting_is_listed_by_its_path_in_field_order() -> None:
    fields = [(s.path, s.name, s.section, s.owner) for s in setting_fields(_Settings)]
    assert fields == [
        ("name", "name", "", _Settings),
        ("engine.inherited", "inherited", "engine", _Engine),
        ("engine.name", "name", "engine", _Engine),
        ("engine.options", "options", "engine", _Engine),
        ("engine.extra_flags", "extra_flags", "engine", _Engine),
        ("engine.url", "url", "engine", _Engine),
        ("engine.timeout", "timeout", "engine", _Engine),
        ("key", "key", "", _Settings),
        ("tags", "tags", "", _Settings),
        ("task_settings", "task_settings", "", _Settings),
    ]
    assert is_section(_Settings.model_fields["engine"])
    assert not is_section(_Settings.model_fields["tags"])


def test_each_setting_gets_the_flag_its_field_derives_or_names() -> None:
    """A section's ``name`` is the section's flag, its ``options`` ``--<section>-option``, any
    other mapping its singular, a named flag wins, anything else is its name with dashes."""
    flags = {s.path: s.flag_name for s in setting_fields(_Settings)}
    assert flags == {
        "name": "--name",
        "engine.inherited": "--inherited",
        "engine.name": "--engine",
        "engine.options": "--engine-option",
        "engine.extra_flags": "--extra-flag",
        "engine.url": "--url",
        "engine.timeout": "--engine-timeout",
        "key": "--key",
        "tags": "--tags",
        "task_settings": "--task-setting",
    }
    mappings = [s.path for s in setting_fields(_Settings) if s.is_mapping]
    assert mappings == ["engine.options", "engine.extra_flags", "task_settings"]
    timeout = next(s for s in setting_fields(_Settings) if s.name == "timeout")
    assert timeout.flag == Flag(name="--engine-timeout", short="-t")
    inherited = _Engine.model_fields["inherited"]
    assert flag_of(_Engine, "inherited", inherited) == Flag(metavar="N")  # the section's FLAGS
    assert flag_of(_Base, "inherited", inherited) == Flag()


def test_secret_settings_are_found_and_recorded_redacted_but_kept_whole() -> None:
    assert secret_paths(_Settings) == ["engine.url", "key"]
    fields = _Settings.model_fields
    assert is_secret(fields["key"]) and not is_secret(fields["name"])
    assert [s.path for s in setting_fields(_Settings) if s.secret] == ["engine.url", "key"]
    settings = _Settings(key="http://u:pw@h/?token=t", engine={"url": "http://a:b@h/"})
    assert settings.key == "http://u:pw@h/?token=t"
    recorded = json.loads(settings.model_dump_json())
    assert recorded["key"] == "http://***@h/?token=***"
    assert recorded["engine"]["url"] == "http://***@h/"
    assert json.loads(_Settings().model_dump_json())["engine"]["url"] is None
    assert repr(SECRET) == "SECRET"


class _Options(BaseModel):
    options: SecretOptions = Field(default_factory=dict)


def test_secret_options_are_recorded_redacted_key_by_key_and_kept_whole() -> None:
    given = {"command": "HF_TOKEN=t agent", "api_key": "k", "width": 2, "empty": ""}
    settings = _Options(options=given)
    assert settings.options == given  # in memory: whole
    recorded = json.loads(settings.model_dump_json())["options"]
    assert recorded == {"command": "HF_TOKEN=*** agent", "api_key": "***", "width": 2, "empty": ""}
    assert is_secret(_Options.model_fields["options"])


def test_hidden_parts_name_what_a_record_hides_of_a_secret_setting() -> None:
    assert hidden_parts("http://u:pw@h/") == [""]
    assert hidden_parts("http://h/") == []
    assert hidden_parts({"api_key": "k", "width": 2, "command": "x --token t"}) == [
        "api_key",
        "command",
    ]
    assert hidden_parts({"api_key": "***"}) == []  # redacted already: nothing more to hide
    recorded = {"api_key": "***", "width": 2, "command": "x --token ***", "url": "http://h/"}
    assert hidden_parts(recorded, recorded=True) == ["api_key", "command"]
    assert hidden_parts("http://***@h/", recorded=True) == [""]
    assert hidden_parts("http://h/", recorded=True) == [] and hidden_parts(3) == []


def test_a_copy_by_dotted_paths_changes_those_settings_only() -> None:
    settings = _Settings()
    copy = with_values(settings, {"engine.name": "x", "engine.timeout": 2.0, "name": "n"})
    assert (copy.engine.name, copy.engine.timeout, copy.name) == ("x", 2.0, "n")
    assert (settings.engine.name, settings.name) == ("e", "top")
    both = with_values(settings, {"engine": _Engine(name="y"), "engine.inherited": 3})
    assert (both.engine.name, both.engine.inherited) == ("y", 3)  # the new section, then its path
    with pytest.raises(KeyError) as caught:
        with_values(settings, {"name.part": 1})
    assert caught.value.args[0] == "name is not a section of _Settings"
    assert value_at(copy, "engine.timeout") == 2.0 and value_at(copy, "name") == "n"


def test_an_optional_type_is_read_as_the_type_it_holds() -> None:
    assert unwrap_optional(int | None) is int
    assert unwrap_optional(Annotated[float | None, Flag()]) is float
    assert unwrap_optional(Annotated[str, Flag()]) is str
    assert unwrap_optional(int | str | None) == int | str | None  # two types: left as it is
    assert unwrap_optional(list[int]) == list[int]
    assert unwrap_optional(int) is int


def test_a_sections_path_keeps_every_letter_of_its_name() -> None:
    class Outer(BaseModel):
        boX: _Engine = Field(default_factory=_Engine)

    first = next(setting_fields(Outer))
    assert (first.path, first.section, first.flag_name) == ("boX.inherited", "boX", "--inherited")
    named = next(s for s in setting_fields(Outer) if s.name == "name")
    assert named.flag_name == "--boX"
