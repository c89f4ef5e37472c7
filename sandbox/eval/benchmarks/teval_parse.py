"""How T-Eval reads a reply: ``format_load`` and its string templates.

From T-Eval (open-compass/T-Eval): ``teval/utils/format_load.py`` (``format_load``) and
``teval/utils/template.py`` (``parse_string``), as its evaluators call them:

- ``format_load(raw, start, end)``: a value that is not a string is returned as it is; a string
  loses everything up to a ```` ```json ```` fence (and the backticks around what is left), then
  is cut from the first ``start`` to the last ``end`` character when given, then read with
  ``ast.literal_eval``, else ``json.loads``, else ``json.loads`` with every ``'`` made ``"``.
  Kept quirk: a ``start`` that does not occur keeps only the last character (``find`` gives -1),
  an ``end`` that does not occur leaves nothing;
- ``parse_string(template, text)``: every ``{name}`` of the template becomes ``(.*)`` and the rest
  of the template is used as a regular expression **as it is** (not escaped, as T-Eval does); the
  first match's groups are the values, a name that occurs twice collects a list. A regular
  expression whose ``(.*)`` groups fail to match a long reply backtracks for as long as the
  reply is long to the power of its groups (a 40 KB reply took minutes): when the template's
  text holds no regular-expression syntax and the groups may span lines (``allow_newline``, how
  T-Eval's instruct evaluator calls it), the first match is found by searching for the template's
  pieces instead (``_literal_groups``), in linear time, with the very groups the expression
  gives; otherwise the expression runs (a caller bounds its time: ``record_limits``).

Pure; standard library only.
"""

from __future__ import annotations

import ast
import json
import re
from string import Formatter
from typing import Any

from sandbox.eval.benchmarks import NoReferenceValue

__all__ = ["FormatLoadError", "format_load", "parse_string"]

FENCE = "```json"


class FormatLoadError(ValueError):
    """``format_load`` could not read the text (T-Eval's "Cannot parse raw data")."""


def format_load(raw: Any, start: str = "", end: str = "") -> Any:
    """T-Eval's ``format_load`` (module doc)."""
    if not isinstance(raw, str):
        return raw
    text = raw
    if FENCE in text:
        text = text[text.find(FENCE) + len(FENCE) :].strip("`")
    if start:
        text = text[text.find(start) :]
    if end:
        text = text[: text.rfind(end) + len(end)]
    for read in (ast.literal_eval, json.loads, _with_double_quotes):
        try:
            return read(text)
        except Exception:  # noqa: BLE001 - T-Eval tries the next reader on any failure
            continue
    raise FormatLoadError("cannot parse raw data")


def _with_double_quotes(text: str) -> Any:
    return json.loads(text.replace("'", '"'))


def parse_string(template: str, text: str, allow_newline: bool = False) -> dict[str, Any] | None:
    """T-Eval's ``parse_string`` (module doc); None when the text does not match.

    ``NoReferenceValue`` when T-Eval's own call raises (a template its formatter or the regular
    expression engine rejects)."""
    try:
        keys = [field for _, field, _, _ in Formatter().parse(template) if field is not None]
    except ValueError as e:
        raise NoReferenceValue(f"T-Eval's template parser rejects {template!r}: {e}") from e
    pattern = template
    for key in keys:
        pattern = pattern.replace("{" + key + "}", "(.*)")
    pieces = pattern.split("(.*)")
    if allow_newline and not any(_REGEX_SYNTAX.search(piece) for piece in pieces):
        groups = _literal_groups(pieces, text)
    else:
        try:
            found = re.findall(pattern, text, re.S if allow_newline else 0)
        except re.error as e:
            raise NoReferenceValue(f"T-Eval's template is not a valid expression: {e}") from e
        groups = (found[0] if isinstance(found[0], tuple) else (found[0],)) if found else None
    if groups is None:
        return None
    data: dict[str, Any] = {}
    for key, value in zip(keys, groups):  # noqa: B905 - T-Eval zips to the shorter side
        if key in data:
            kept = data[key]
            data[key] = [*kept, value] if isinstance(kept, list) else [kept, value]
        else:
            data[key] = value
    return data


_REGEX_SYNTAX = re.compile(r"[.^$*+?{}\[\]\\|()]")
"""A character that means something in a regular expression: a piece without one matches
itself."""


def _literal_groups(pieces: list[str], text: str) -> tuple[str, ...] | None:
    """The groups of ``re.findall(piece0 (.*) piece1 ... (.*) pieceK, text, re.S)[0]`` for
    plain-text pieces, found without backtracking: the match starts at the first ``piece0``;
    each greedy group ends where the next piece starts last while every later piece still
    fits after it (from the right: the last ``pieceK``, then the last ``piece(K-1)`` that ends
    before it, ...). None when there is no match."""
    start = text.find(pieces[0])
    if start == -1:
        return None
    if len(pieces) == 1:
        return ()
    ends = [len(text) if not pieces[-1] else text.rfind(pieces[-1])]
    for piece in reversed(pieces[1:-1]):
        ends.append(text.rfind(piece, 0, ends[-1]))
    ends.reverse()  # where each piece after a group starts
    begin = start + len(pieces[0])
    if min(ends) < 0 or ends[0] < begin:
        return None
    groups = []
    for piece, end in zip(pieces[1:], ends, strict=True):
        groups.append(text[begin:end])
        begin = end + len(piece)
    return tuple(groups)
