"""Instruct / format alignment: the share of model turns that made a well-formed call.

ToolEyes (Ye et al. 2024, "ToolEyes: Fine-Grained Evaluation for Tool Learning Capabilities of
Large Language Models in Real-world Scenarios", format alignment, the first of its five
capabilities) and T-Eval's ``instruct`` (``teval/evaluators/instruct_evaluator.py``) both ask
whether the model's output follows the required call format; here the format is a native
function call, checked against the offered functions and their JSON Schemas.

Which turns: every model turn of the episode, **all nodes of the tree**, not only the chosen path.
Following the format is a property of each turn the model wrote, whatever the search later did with
it; restricting it to the chosen path would hide the malformed turns DFSDT backtracked from.
Nodes of kind ``error`` (the model call itself failed: endpoint, timeout) are not turns the model
wrote and are left out. So are **thought-only turns** (``thought_only``): a turn with text and no
call at all, which ToolBench's function-calling loop accepts as a "Thought" node and answers with
the next model call. It made no call, so it made no malformed one; counting it as malformed gave
a flawless imported ToolBench episode an instruct score of 0.75. A turn whose text a text adapter
could not parse (its own ``format_error``) is still malformed.

A turn is well-formed when it made at least one call (or a recorded Finish) and every call:

- names a function that exists: an API offered to the task (resolved from the name with
  ToolBench's rules), or ``Finish``;
- has arguments that parse as a JSON object;
- is valid against the function's JSON Schema (``jsonschema``) after canonicalisation (so "5"
  for an integer parameter is fine, as it is for the mock server). ``Finish`` is checked against
  its own schema.

A turn of kind ``invalid`` (no usable call, format error) is not well-formed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jsonschema import exceptions as schema_errors
from jsonschema import validators

from agents.toolenv import FINISH, FINISH_FUNCTION
from agents.trajectory import Node, StepCall
from mock_tools.canonical import canonical_args, dumps_canonical
from mock_tools.names import NameResolver
from sandbox.eval.actions import ApiKey, Apis, resolve_call
from sandbox.eval.measure import Measure, ratio

__all__ = [
    "NO_CALL_REASONS",
    "SchemaValidators",
    "call_well_formed",
    "format_alignment",
    "thought_only",
    "turn_well_formed",
]

NO_CALL_REASONS = frozenset({"it contained no function call", "a thought without an action"})
"""The reasons a turn is recorded ``invalid`` for having no call at all: the agents' step
(``agents.step.interpret_turn``) and the ToolBench importer (``interop.toolbench_answers``)."""

_FINISH_SCHEMA: dict[str, Any] = FINISH_FUNCTION["function"]["parameters"]


class SchemaValidators:
    """JSON Schema validators per API, built on first use and kept for the scoring session,
    with the verdicts on arguments already seen (runs repeat the same calls across episodes)."""

    def __init__(self, apis: Apis) -> None:
        self._apis = apis
        self._cache: dict[ApiKey | None, Any] = {}
        self._seen: dict[tuple[ApiKey | None, str], list[str]] = {}

    def errors(self, key: ApiKey | None, args: dict[str, Any]) -> list[str]:
        """Schema violations of canonicalised ``args`` (``key`` None = the Finish function)."""
        try:
            seen = (key, dumps_canonical(args))
        except (TypeError, ValueError):  # not JSON (a test's hand-built call): just check it
            return self._check(key, args)
        if seen not in self._seen:
            self._seen[seen] = self._check(key, args)
        return list(self._seen[seen])

    def _check(self, key: ApiKey | None, args: dict[str, Any]) -> list[str]:
        schema = _FINISH_SCHEMA if key is None else self._apis[key].parameters
        if key not in self._cache:
            cls = validators.validator_for(schema)
            try:
                cls.check_schema(schema)
                self._cache[key] = cls(schema)
            except schema_errors.SchemaError:
                self._cache[key] = None  # a broken schema in the suite: nothing to check against
        validator = self._cache[key]
        if validator is None:
            return []
        return [e.message for e in validator.iter_errors(canonical_args(args, schema))]


def call_well_formed(
    call: StepCall,
    offered: set[ApiKey],
    resolver: NameResolver,
    checks: SchemaValidators,
) -> bool:
    if call.args is None:
        return False
    if call.name == FINISH:
        return not checks.errors(None, call.args)
    key = resolve_call(call, resolver)
    if key is None or key not in offered:
        return False
    return not checks.errors(key, call.args)


def thought_only(node: Node) -> bool:
    """A turn with text and no call of any kind (not a parse failure of a text adapter): a node
    of kind ``thought``, or an ``invalid`` one of a run recorded before that kind existed."""
    if node.kind == "thought":
        return True
    return (
        node.kind == "invalid"
        and not node.calls
        and node.finish is None
        and bool((node.content or "").strip())
        and node.format_error in NO_CALL_REASONS
    )


def turn_well_formed(
    node: Node, offered: set[ApiKey], resolver: NameResolver, checks: SchemaValidators
) -> bool:
    if node.kind == "invalid" or node.format_error:
        return False
    if not node.calls:
        return node.finish is not None
    return all(call_well_formed(c, offered, resolver, checks) for c in node.calls)


def format_alignment(
    nodes: Iterable[Node],
    offered: set[ApiKey],
    resolver: NameResolver,
    checks: SchemaValidators,
) -> Measure:
    """Share of the model's turns that were well-formed (all tree nodes but ``error`` and
    thought-only ones)."""
    turns = [n for n in nodes if n.kind != "error" and not thought_only(n)]
    good = sum(turn_well_formed(n, offered, resolver, checks) for n in turns)
    return ratio(good, len(turns))
