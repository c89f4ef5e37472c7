"""Settings from config files, flags and ``-C`` overrides, merged into one settings model.

``sandbox run --config run.yaml --seed 1 -C budget.max_depth=3``: the file's settings, then the
flags given on the command line, then each ``-C PATH=VALUE``; later wins, setting by setting.
A config file is a YAML (or JSON) mapping in the layout of the command's settings model, sections
as mappings (``budget: {max_depth: 3}``): a run's manifest config saved as YAML is one, and so is
the flat config of an older manifest (read through ``RunConfig``'s upgrade). ``-C`` takes a
dotted path and a value read as a YAML/JSON scalar or a ``[...]``/``{...}`` collection, else as
text; a setting that is text takes the value as written. Flags count only when given (their
defaults are ``SUPPRESS``, ``sandbox.commands.settings_flags``), so a file's value is never
replaced by a flag's default. An unknown key names the keys its section takes; a file that
cannot be read, is not YAML or holds no mapping is a one-line ``ConfigError``.
"""

from __future__ import annotations

import argparse
import copy
import json
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from sandbox.errors import ConfigError
from sandbox.store.config_upgrade import upgrade_flat
from sandbox.store.paths import read_regular_file
from sandbox.store.setting import (
    SettingField,
    hidden_parts,
    is_section,
    setting_fields,
    unwrap_optional,
    value_at,
)

__all__ = [
    "add_config_flags",
    "check_unredacted",
    "config_yaml",
    "flag_settings",
    "merged_settings",
    "namespace_settings",
    "parse_value",
    "settings_from_args",
    "validate_settings",
]

M = TypeVar("M", bound=BaseModel)
_FILES = "config_files"
_OVERRIDES = "config_overrides"


def add_config_flags(parser: argparse.ArgumentParser) -> None:
    """``--config FILE`` (repeatable) and ``-C``/``--set PATH=VALUE`` (repeatable)."""
    group = parser.add_argument_group(
        "config files", "file < flags < -C: later wins, setting by setting"
    )
    group.add_argument(
        "--config",
        dest=_FILES,
        metavar="FILE",
        action="append",
        default=[],
        help="a YAML (or JSON) mapping of settings keyed as -C paths are, sections as mappings "
        "(a run's manifest config is one); repeatable",
    )
    group.add_argument(
        "-C",
        "--set",
        dest=_OVERRIDES,
        metavar="PATH=VALUE",
        action="append",
        default=[],
        help="one setting by its path (e.g. budget.max_depth=3); VALUE is YAML/JSON, else "
        "text; repeatable, wins over files and flags",
    )


def settings_from_args(args: argparse.Namespace, model: type[M]) -> M:
    """The settings of ``args`` (files, then flags given, then ``-C``), validated."""
    return validate_settings(model, merged_settings(args, model))


def merged_settings(args: argparse.Namespace, model: type[BaseModel]) -> dict[str, Any]:
    """Files, flags given and ``-C`` overrides merged into one nested mapping (not validated)."""
    merged: dict[str, Any] = {}
    for path in getattr(args, _FILES, None) or []:
        _merge(merged, file_settings(path, model))
    _merge(merged, given_settings(args, model))
    for pair in getattr(args, _OVERRIDES, None) or []:
        _merge(merged, override_setting(pair, model))
    return merged


def file_settings(path: str, model: type[BaseModel]) -> dict[str, Any]:
    """The settings of one config file, keys checked against ``model``."""
    try:
        data = upgrade_flat(_read_mapping(path), model)
    except ValueError as e:  # a setting given twice, flat and in its section
        raise ConfigError(f"config file {path}: {e}") from e
    _check_keys(data, model, "")
    return dict(data)


def _read_mapping(path: str) -> dict[str, Any]:
    """The mapping a config file holds; ``ConfigError`` in one line for anything else."""
    from mock_tools.yaml_text import MAX_YAML_BYTES

    try:
        text = read_regular_file(path, MAX_YAML_BYTES).decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"config file {path} is not UTF-8 text (byte {e.start})") from e
    except OSError as e:
        raise ConfigError(f"cannot read config file {path}: {e.strerror or e}") from e
    except ValueError as e:  # a FIFO, a device, over the YAML size limit
        raise ConfigError(f"config file {e}") from e
    data = _load_yaml(text, f"config file {path}")
    if not isinstance(data, dict):
        kind = "nothing" if data is None else f"a {type(data).__name__}"
        raise ConfigError(
            f"config file {path} holds {kind}, not a mapping of settings (write e.g. "
            "`budget: {max_depth: 3}`)"
        )
    return data


def _yaml_problem(e: Exception) -> str:
    """A YAML error in one line: what and where."""
    problem = getattr(e, "problem", None) or type(e).__name__
    mark = getattr(e, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"{problem}{where}"


def _check_keys(data: Mapping[str, Any], model: type[BaseModel], prefix: str) -> None:
    for key, value in data.items():
        field = model.model_fields.get(str(key))
        if field is None:
            raise ConfigError(_unknown(f"{prefix}{key}", model, prefix.rstrip(".")))
        if is_section(field) and isinstance(value, Mapping):
            assert isinstance(field.annotation, type)
            _check_keys(value, field.annotation, f"{prefix}{key}.")


def _unknown(path: str, owner: type[BaseModel], section: str) -> str:
    where = f"section {section}" if section else "the top level"
    return f"unknown setting {path}; {where} takes: {', '.join(owner.model_fields)}"


def _leaf(model: type[BaseModel], path: str) -> tuple[FieldInfo, list[str]]:
    """The setting a dotted path names, and the keys below it inside a mapping setting."""
    parts = path.split(".")
    owner: type[BaseModel] = model
    for i, part in enumerate(parts):
        section = ".".join(parts[:i])
        field = owner.model_fields.get(part)
        if field is None:
            raise ConfigError(_unknown(path, owner, section))
        if not is_section(field):
            rest = parts[i + 1 :]
            if rest and not _is_mapping(field):
                raise ConfigError(f"{'.'.join(parts[: i + 1])} is a setting, not a section")
            return field, rest
        assert isinstance(field.annotation, type)
        owner = field.annotation
    raise ConfigError(f"{path} is a section; give one of its settings: {_keys(owner)}")


def _keys(owner: type[BaseModel]) -> str:
    return ", ".join(owner.model_fields)


def _is_mapping(field: FieldInfo) -> bool:
    annotation = unwrap_optional(field.annotation)
    return annotation is dict or get_origin(annotation) is dict


def given_settings(args: argparse.Namespace, model: type[BaseModel]) -> dict[str, Any]:
    """The settings given as flags (a namespace holds only those, see ``settings_flags``)."""
    out: dict[str, Any] = {}
    pairs: list[tuple[str, list[str]]] = []
    for dest, value in vars(args).items():
        if dest.split(".", 1)[0] not in model.model_fields:
            continue
        field, rest = _leaf(model, dest)
        if _is_mapping(field) and not rest and isinstance(value, list):
            pairs.append((dest, value))  # KEY=VALUE flags: after the single options they hold
        else:
            _set(out, dest.split("."), value)
    for dest, items in pairs:
        flag = _flag_of(model, dest)
        for item in items:
            key, value = _pair(item, flag)
            _set(out, [*dest.split("."), key], value)
    return out


def _flag_of(model: type[BaseModel], path: str) -> str:
    found = next((s for s in setting_fields(model) if s.path == path), None)
    return found.flag_name if found is not None else path


def _pair(item: str, flag: str) -> tuple[str, Any]:
    """``KEY=VALUE`` of a mapping's flag: the key (dashes as underscores in its last dotted
    part, so ``answer-length.max-chars`` keeps the metric's name), VALUE as JSON, else the
    text."""
    key, sep, text = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"{flag} expects KEY=VALUE, got {item!r}")
    try:
        value: Any = json.loads(text)
    except ValueError:
        value = text
    except RecursionError:
        raise ConfigError(f"{flag} {key.strip()}: the value is nested too deeply to read") from None
    head, dot, last = key.strip().rpartition(".")
    return head + dot + last.replace("-", "_"), value


def override_setting(pair: str, model: type[BaseModel]) -> dict[str, Any]:
    """One ``-C PATH=VALUE`` as a nested mapping; the path checked against ``model``."""
    path, sep, text = pair.partition("=")
    path = path.strip()
    if not sep or not path:
        raise ConfigError(f"-C expects PATH=VALUE (e.g. budget.max_depth=3), got {pair!r}")
    field, rest = _leaf(model, path)
    out: dict[str, Any] = {}
    _set(out, path.split("."), _override_value(field, rest, text))
    return out


def _override_value(field: FieldInfo, rest: list[str], text: str) -> Any:
    if rest:  # a key inside a mapping setting: no type to go by
        return parse_value(text)
    annotation = unwrap_optional(field.annotation)
    optional = annotation is not field.annotation
    if annotation is str:
        return None if optional and text.strip() in ("null", "~") else text
    value = parse_value(text)
    if get_origin(annotation) is list and not isinstance(value, list):
        return [value]
    return value


def parse_value(text: str) -> Any:
    """``text`` as a YAML/JSON scalar, or a collection written as one (``[...]``, ``{...}``);
    else the text itself."""
    try:
        value = _load_yaml(text, "")
    except ConfigError:  # not YAML: the text as written
        return text
    if isinstance(value, (list, dict)):
        return value if text.lstrip().startswith(("[", "{")) else text
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    return text  # a date or another tagged value: keep what was written


def _set(out: dict[str, Any], parts: list[str], value: Any) -> None:
    for part in parts[:-1]:
        inner = out.get(part)
        if not isinstance(inner, dict):
            inner = out[part] = {}
        out = inner
    out[parts[-1]] = value


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> None:
    """``over`` into ``base``: mappings merge key by key, any other value replaces."""
    for key, value in over.items():
        current = base.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            _merge(current, value)
        else:
            base[key] = dict(value) if isinstance(value, Mapping) else value


def validate_settings(model: type[M], data: Mapping[str, Any]) -> M:
    """``model`` from merged settings; ``ConfigError`` naming each bad setting's flag and path.
    A number setting given ``true`` or ``false`` is one of them (pydantic would take it as 1
    or 0: ``seed: true`` in a file is a mistake, not seed 1)."""
    booleans = [
        f"{s.flag_name} ({s.path}) takes a number, not {json.dumps(value)}"
        for s in setting_fields(model)
        if unwrap_optional(s.field.annotation) in (int, float)
        and isinstance(value := _given_at(data, s.path), bool)
    ]
    if booleans:
        raise ConfigError(f"invalid settings: {'; '.join(booleans)}")
    try:
        return model.model_validate(dict(data))
    except ValidationError as e:
        leaves = {s.path: s for s in setting_fields(model)}
        problems = "; ".join(_problem(err, leaves) for err in e.errors())
        raise ConfigError(f"invalid settings: {problems}") from e


def _given_at(data: Mapping[str, Any], path: str) -> Any:
    """The value ``data`` gives at a dotted path (None when it gives none)."""
    value: Any = data
    for name in path.split("."):
        if not isinstance(value, Mapping) or name not in value:
            return None
        value = value[name]
    return value


def _problem(err: Any, leaves: Mapping[str, SettingField]) -> str:
    """One validation error as the setting it is about (a rule over several names them)."""
    msg = str(err["msg"]).removeprefix("Value error, ")
    loc = [str(p) for p in err["loc"]]
    for end in range(len(loc), 0, -1):
        setting = leaves.get(".".join(loc[:end]))
        if setting is not None:
            return f"{setting.flag_name} ({'.'.join(loc)}): {msg}"
    return msg


def flag_settings(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """For a command whose flags are written by hand (``serve``: shared with ``python -m
    mock_tools serve``): its settings are its flags, by ``dest`` (``miss_policy``, ``port``).
    Their defaults become ``SUPPRESS`` (so a given flag is known as given); the actions, with
    their defaults, are returned for ``namespace_settings``."""
    actions = {}
    for action in parser._actions:  # noqa: SLF001
        if action.option_strings and action.dest not in ("help", _FILES, _OVERRIDES):
            actions[action.dest] = copy.copy(action)
            action.default = argparse.SUPPRESS
    return actions


def namespace_settings(
    args: argparse.Namespace, actions: Mapping[str, argparse.Action]
) -> argparse.Namespace:
    """``args`` with every flag's value: its default, then the files', the flag given, then
    ``-C``'s, each value checked as the flag would check it."""
    values = {dest: action.default for dest, action in actions.items()}
    for path in getattr(args, _FILES, None) or []:
        data = _read_mapping(path)
        for key, value in data.items():
            values[key] = _flag_value(actions, str(key), value)
    values.update({d: v for d, v in vars(args).items() if d in actions})
    for pair in getattr(args, _OVERRIDES, None) or []:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"-C expects KEY=VALUE (e.g. port=9000), got {pair!r}")
        values[key.strip()] = _flag_value(actions, key.strip(), text)
    return argparse.Namespace(**{**vars(args), **values})


def _flag_value(actions: Mapping[str, argparse.Action], key: str, value: Any) -> Any:
    action = actions.get(key.replace("-", "_"))
    if action is None:
        raise ConfigError(f"unknown setting {key}; this command takes: {', '.join(actions)}")
    flag = action.option_strings[-1]
    if isinstance(action, argparse._AppendAction):  # a KEY=VALUE flag: a mapping, or its pairs
        if isinstance(value, dict):
            return [f"{k}={json.dumps(v)}" for k, v in value.items()]
        return [str(v) for v in (value if isinstance(value, list) else [value])]
    if action.nargs == 0:  # a switch
        value = parse_value(value) if isinstance(value, str) else value
        if not isinstance(value, bool):
            raise ConfigError(f"{key} ({flag}) is true or false, not {value!r}")
        return value
    if isinstance(value, (dict, list)) or value is None:
        raise ConfigError(f"{key} ({flag}) takes one value, not {value!r}")
    convert = action.type if callable(action.type) else str
    try:
        value = convert(value if isinstance(value, str) else str(value))
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{key} ({flag}): {value!r} is not a valid value") from e
    if action.choices is not None and value not in action.choices:
        choices = ", ".join(map(str, action.choices))
        raise ConfigError(f"{key} ({flag}): {value!r} is not one of {choices}")
    return value


def check_unredacted(settings: BaseModel) -> None:
    """``ConfigError`` for a secret setting that holds redacted credentials (``***``, as a
    manifest or ``--print-config`` writes them): they must be given again to run."""
    for setting in setting_fields(type(settings)):
        if not setting.secret:
            continue
        value = value_at(settings, setting.path)
        for key in hidden_parts(value, recorded=True):
            if key:
                raise ConfigError(
                    f"{setting.path} {key} holds redacted credentials ({value[key]}): give its "
                    f"full value again with {setting.flag_name} {key}=..."
                )
            raise ConfigError(
                f"{setting.path} holds redacted credentials ({value}): give its full value again "
                f"with {setting.flag_name} or -C {setting.path}=..."
            )


def config_yaml(settings: BaseModel, *, exclude: Iterable[str] = ()) -> str:
    """``settings`` as a config file (YAML; secret settings redacted)."""
    from mock_tools.yaml_text import dump_yaml_text

    return dump_yaml_text(settings.model_dump(mode="json", exclude=set(exclude)))


def _load_yaml(text: str, what: str) -> Any:
    """The data of YAML ``text``; ``ConfigError`` saying where ``what`` is not YAML."""
    import yaml  # PyYAML only when a setting is read: not for --help

    from mock_tools.yaml_text import load_yaml

    try:
        return load_yaml(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"{what} is not YAML: {_yaml_problem(e)}") from e
