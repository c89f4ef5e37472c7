"""What a setting says about itself beyond its type: its command-line face and whether it is secret.

Settings are pydantic fields: ``RunConfig`` and its sections, and the settings model of each
command. A field ``max_depth`` is the flag ``--max-depth`` by default, typed from its
annotation, its help its ``description``, its default shown beside it. ``Flag`` (``Annotated``
metadata, or a section's ``FLAGS`` for fields it inherits) says what the default derivation gets
wrong: another flag name, a short form, a metavar, a short help for ``--help`` (the description
stays the long text of the docs), or the registry whose names a value takes (``module:NAME``, read
by the command line only, so this layer imports no registry). ``SECRET`` marks a setting whose
value may carry credentials (a URL with a key in it, an option ``api_key``): ``SecretText`` and
``SecretOptions`` record it redacted, and a resume is given it again.

``setting_fields(model)`` walks a settings model and its sections as dotted paths
(``budget.max_depth``); ``with_values(model, {"output.out": ...})`` is ``model_copy`` by paths.
Imports nothing of the project but ``sandbox.store.redact``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar, get_args, get_origin

from pydantic import BaseModel, PlainSerializer
from pydantic.fields import FieldInfo

from sandbox.store.redact import holds_redacted, redact, redact_data

__all__ = [
    "SECRET",
    "Flag",
    "OptionalSecretText",
    "RedactedData",
    "RedactedText",
    "SecretOptions",
    "SecretText",
    "SettingField",
    "flag_of",
    "hidden_parts",
    "is_section",
    "is_secret",
    "secret_paths",
    "setting_fields",
    "unwrap_optional",
    "value_at",
    "with_values",
]

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Flag:
    """How a setting appears on the command line where the derivation from its field is wrong."""

    name: str | None = None
    """The long flag (``--tools-url``); default ``--`` and the field name with dashes, or for a
    field ``name`` the section's name (``agent.name`` is ``--agent``)."""
    short: str | None = None
    """A short form (``-O``)."""
    metavar: str | None = None
    help: str | None = None
    """The line ``--help`` shows; default: the field's description."""
    registry: str | None = None
    """``module:NAME`` of the ``Registry`` the value names an entry of: ``--help`` lists its
    entries with their summaries."""
    choices: bool = False
    """With ``registry``: only its names are accepted on the command line."""
    nargs: str | None = None
    """For a list: several values after one flag (``--runs A B``) instead of a repeated flag."""


class _Secret:
    """The marker of a setting whose value may carry credentials."""

    def __repr__(self) -> str:
        return "SECRET"


SECRET = _Secret()


def _redacted(value: str | None) -> str | None:
    return None if value is None else redact(value)


RedactedText = PlainSerializer(_redacted, return_type=str | None)
"""Records show a text through ``redact``."""
SecretText = Annotated[str, RedactedText, SECRET]
"""Text that may carry credentials: records (the manifest, ``--print-config``) show it redacted
(``sandbox.store.redact``); the value in memory is whole."""
OptionalSecretText = Annotated[str | None, RedactedText, SECRET]
RedactedData = PlainSerializer(redact_data, return_type=dict[str, Any])
"""Records show a mapping through ``redact_data`` (a secret-named key's value hidden)."""
SecretOptions = Annotated[dict[str, Any], RedactedData, SECRET]
"""Options (``-O``, ``--model-option``...) that may carry credentials: the value under a
secret-named key (``api_key``) and credentials inside any text (a URL's user info, a command's
``--api-key=...`` or ``OPENAI_API_KEY=...``) are recorded redacted, the mapping in memory whole.
A resume gives each redacted option again (``sandbox.run.runner``)."""


@dataclass(frozen=True)
class SettingField:
    """One leaf setting of a settings model, by its dotted path."""

    path: str
    name: str
    field: FieldInfo
    owner: type[BaseModel]
    section: str
    """The path of the section that holds it ('' at the top)."""

    @property
    def flag(self) -> Flag:
        return flag_of(self.owner, self.name, self.field)

    @property
    def flag_name(self) -> str:
        """The long flag: ``Flag.name``, else ``--<section>`` for a section's ``name``,
        ``--<section>-option`` for its ``options`` (a mapping given as KEY=VALUE pairs, one flag
        per pair, as ``--miss-option`` for ``miss_options`` and ``--task-setting`` for
        ``task_settings``), else ``--`` and the field name with dashes."""
        if self.flag.name:
            return self.flag.name
        section = self.section.rsplit(".", 1)[-1]
        name = self.name
        if name == "name" and section:
            name = section
        elif self.is_mapping:
            name = name.removesuffix("s")
            if name == "option" and section:
                name = f"{section}-option"
        return "--" + name.replace("_", "-")

    @property
    def is_mapping(self) -> bool:
        """Whether the setting is a mapping (its flag takes KEY=VALUE pairs)."""
        annotation = unwrap_optional(self.field.annotation)
        return annotation is dict or get_origin(annotation) is dict

    @property
    def secret(self) -> bool:
        return is_secret(self.field)


def hidden_parts(value: Any, *, recorded: bool = False) -> list[str]:
    """What a record hides of a secret setting's ``value``: ``[""]`` for a text, the keys of a
    mapping whose values it changes, ``[]`` for nothing. With ``recorded`` the value is one read
    back from a record, and the parts holding ``***`` are returned."""

    def hidden(v: Any) -> bool:
        return holds_redacted(v) if recorded else redact_data(v) != v

    if isinstance(value, dict):
        return [str(k) for k, v in value.items() if hidden({k: v})]
    return [""] if isinstance(value, str) and hidden(value) else []


def is_section(field: FieldInfo) -> bool:
    """Whether a field is a section (a settings model of its own) rather than a value."""
    annotation = field.annotation
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def setting_fields(model: type[BaseModel], prefix: str = "") -> Iterator[SettingField]:
    """Every leaf setting of ``model``, sections walked in their order, as dotted paths."""
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        if is_section(field):
            assert isinstance(field.annotation, type)
            yield from setting_fields(field.annotation, prefix=path + ".")
        else:
            yield SettingField(path, name, field, model, prefix.rstrip("."))


def flag_of(owner: type[BaseModel], name: str, field: FieldInfo) -> Flag:
    """The ``Flag`` a field carries (``Annotated``), or its section's ``FLAGS`` entry, or none."""
    for meta in field.metadata:
        if isinstance(meta, Flag):
            return meta
    flags: Mapping[str, Flag] = getattr(owner, "FLAGS", {})  # a section's, for inherited fields
    return flags.get(name, Flag())


def is_secret(field: FieldInfo) -> bool:
    return any(meta is SECRET for meta in field.metadata)


def secret_paths(model: type[BaseModel]) -> list[str]:
    """The dotted paths of the settings marked ``SECRET``."""
    return [s.path for s in setting_fields(model) if s.secret]


def with_values(model: M, values: Mapping[str, Any]) -> M:
    """A copy of ``model`` with each dotted path set (like ``model_copy(update=...)``: values
    are taken as they are, not validated)."""
    nested: dict[str, dict[str, Any]] = {}
    update: dict[str, Any] = {}
    for path, value in values.items():
        head, dot, rest = path.partition(".")
        if dot:
            nested.setdefault(head, {})[rest] = value
        else:
            update[head] = value
    for head, inner in nested.items():
        section = update.get(head, getattr(model, head))
        if not isinstance(section, BaseModel):
            raise KeyError(f"{head} is not a section of {type(model).__name__}")
        update[head] = with_values(section, inner)
    return model.model_copy(update=update)


def value_at(model: BaseModel, path: str) -> Any:
    """The setting at a dotted path (``value_at(config, "budget.max_depth")``)."""
    value: Any = model
    for name in path.split("."):
        value = getattr(value, name)
    return value


def unwrap_optional(annotation: Any) -> Any:
    """``int`` for ``int | None`` (the first type that is not None), else the annotation."""
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    args = get_args(annotation)
    if args and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return rest[0] if len(rest) == 1 else annotation
    return annotation
