"""Equivalent mutants: changes that no test can detect because behaviour does not change.

Each is named by its module, the function it mutates and the exact lines it changes (stripped of
indentation), so an entry goes stale, and the mutant counts as a survivor again, as soon as the
code it describes changes. ``why`` says why the behaviour is the same; ``docs/testing.md`` lists
every entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["EQUIVALENTS", "Equivalent", "matching"]


@dataclass(frozen=True)
class Equivalent:
    module: str
    function: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    why: str


_SQL_CASE = (
    "SQLite reads keywords, table and column names (and the journal_mode value) in any letter "
    "case: the statement is the same"
)


def _sql_case(module: str, function: str, before: str, sql: str, after: str) -> list[Equivalent]:
    """mutmut's two case mutants of an SQL string literal (all lower case, all upper case) on the
    line ``before + '"' + sql + '"' + after``."""
    line = f'{before}"{sql}"{after}'
    return [
        Equivalent(module, function, (line,), (f'{before}"{case}"{after}',), _SQL_CASE)
        for case in (sql.lower(), sql.upper())
    ]


_TEVAL = "sandbox.eval.steps.teval_metrics"
_ACTIONS = "sandbox.eval.steps.actions"
_FINISH_GOLD = (
    "the Finish question's gold thought and arguments are never read: its reason and understand "
    "are not collected (T-Eval's Finish question has neither), only its name and parse rate"
)
_JSON_DEFAULT = (
    "the benchmark reads a datum without this key (or without its response_format / "
    "prompt_type) as the JSON format, its default: the same format either way"
)
_PAIRS_FIRST = (
    "edges join calls and steps of the same API only, so the graph is a union of complete "
    "bipartite parts and every weight is positive: a maximum-weight matching is maximal, hence "
    "of maximum cardinality in each part, whatever the flag or the positive base weight"
)


def _renamed_key(module: str, function: str, line: str, key: str, why: str) -> list[Equivalent]:
    """mutmut's two mutants of the string literal ``"key"`` in ``line``: ``"XXkeyXX"`` and the
    key in the other letter case."""
    other = key.upper() if key.islower() else key.lower()
    return [
        Equivalent(module, function, (line,), (line.replace(f'"{key}"', f'"{new}"', 1),), why)
        for new in (f"XX{key}XX", other)
    ]


_REPLIES = "sandbox.eval.steps.replies"
_OFFERED_NAME = 'name = str(f.get("function", {}).get("name") or "")'
_OFFERED_KEY = "key = resolver.resolve_function(name) if name and name != FINISH else None"
_NO_FUNCTION = (
    "the resolver knows function names of the form <api>_for_<tool> only: it resolves neither "
    "'', 'XXXX' nor 'Finish', so asking it about them adds no name"
)
_RATIO = "return Measure(value=hits / total, n=total) if total > 0 else Measure(value=None, n=0)"
_SELECT_ZIP = "hits = sum(1 for p, g in zip(chosen, wanted, strict=True) if p == g)"
_FINISH_TRUTH = '"ground_truth": truth or {"thought": "", "name": FINISH, "args": {}},'
_PLAN_DATUM = 'datum = {"prediction": pred, "ground_truth": gold, "meta": {"prompt_type": "json"}}'
_PAIR_EDGE = "edges.append((i, j, 2.0 + sim - 1e-3 * (i - j) ** 2 / scale))"
_PAIRS_CALL = "return max_weight_pairs(edges, maxcardinality=True, memo=memo)"

_OVERLAY = "mock_tools.overlay"
_REPLAY = "sandbox.replay.replay"
_DEFAULT_NONE = "the argument left out is the field's default (None): the same StepDiff"

EQUIVALENTS: tuple[Equivalent, ...] = (
    *_sql_case(
        _OVERLAY, "OverlayStore.__init__", "self._db.execute(", "PRAGMA journal_mode=WAL", ")"
    ),
    *_sql_case(
        _OVERLAY,
        "OverlayStore.__len__",
        "return int(self._db.execute(",
        "SELECT COUNT(*) FROM responses",
        ").fetchone()[0])",
    ),
    *_sql_case(
        _OVERLAY,
        "OverlayStore.get",
        "",
        "SELECT response, provenance FROM responses WHERE tool = ? AND api = ? AND key = ?",
        ",",
    ),
    *_sql_case(
        _OVERLAY,
        "OverlayStore.put",
        "",
        "INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?, ?)",
        ",",
    ),
    *_sql_case(
        _OVERLAY,
        "OverlayStore.recordings",
        "",
        "SELECT tool, api, key, response, provenance FROM responses ORDER BY tool, api, key",
        "",
    ),
    *_sql_case(
        _OVERLAY,
        "OverlayStore.fingerprint",
        "",
        "SELECT tool, api, key, response FROM responses ORDER BY tool, api, key",
        "",
    ),
    Equivalent(
        _OVERLAY,
        "OverlayStore.fingerprint",
        ('digest.update("\\0".join(row).encode("utf-8"))',),
        ('digest.update("\\0".join(row).encode("UTF-8"))',),
        "Python looks codec names up in any letter case: the same UTF-8 encoder",
    ),
    *(
        Equivalent(_REPLAY, function, (line,), (line.replace(drop, ""),), _DEFAULT_NONE)
        for function, line, drop in (
            (
                "compare_trajectories",
                'verdict.first_diff = StepDiff(node=want.id, field="node", expected=want.kind, '
                "got=None)",
                "got=None",
            ),
            (
                "compare_trajectories",
                'node=extra.id, field="node", expected=None, got=extra.kind',
                "expected=None, ",
            ),
            (
                "EpisodeVerdict.not_replayed",
                "first_diff=StepDiff(node=None, field=field, expected=expected, got=None),",
                "got=None",
            ),
        )
    ),
    *(
        Equivalent(
            _REPLAY,
            "_node_diff",
            ("for k, (a, b) in enumerate(zip(want.calls, have.calls, strict=True)):",),
            (f"for k, (a, b) in enumerate(zip(want.calls, have.calls, {strict})):",),
            "node_difference has returned the differing call count before this loop, so both "
            "lists have the same length and strictness never applies",
        )
        for strict in ("", "strict=False")
    ),
    *(
        Equivalent(
            _TEVAL,
            "teval_instruct",
            ('"instruct": mean_measure((f + e) / 2 for f, e in zip(fmt, em, strict=True)),',),
            (f'"instruct": mean_measure((f + e) / 2 for f, e in zip(fmt, em, {strict})),',),
            "fmt and em get one item each per question in the same loop: always the same "
            "length, so strictness never applies",
        )
        for strict in ("", "strict=False")
    ),
    *_renamed_key(_TEVAL, "_rru", _FINISH_TRUTH, "thought", _FINISH_GOLD),
    *_renamed_key(_TEVAL, "_rru", _FINISH_TRUTH, "args", _FINISH_GOLD),
    Equivalent(
        _TEVAL,
        "_rru",
        (_FINISH_TRUTH,),
        ('"ground_truth": truth or {"thought": "XXXX", "name": FINISH, "args": {}},',),
        _FINISH_GOLD,
    ),
    *_renamed_key(_TEVAL, "_rru", '"meta_data": JSON,', "meta_data", _JSON_DEFAULT),
    *_renamed_key(_TEVAL, "teval_plan", _PLAN_DATUM, "meta", _JSON_DEFAULT),
    *_renamed_key(_TEVAL, "teval_plan", _PLAN_DATUM, "prompt_type", _JSON_DEFAULT),
    Equivalent(
        "sandbox.eval.steps.metric",
        "ScoredMetric.measure",
        ("if len(got) == len(declared) and tuple(got) == declared:",),
        ("if len(got) != len(declared) and tuple(got) == declared:",),
        "a shortcut: without it the general path returns the same dict (no undeclared name, "
        "every declared measure read from got, in declared order)",
    ),
    Equivalent(
        _ACTIONS,
        "match_actions",
        (_PAIR_EDGE,),
        (_PAIR_EDGE.replace("2.0 +", "3.0 +"),),
        _PAIRS_FIRST,
    ),
    *(
        Equivalent(_ACTIONS, "match_actions", (_PAIRS_CALL,), (after,), _PAIRS_FIRST)
        for after in (
            "return max_weight_pairs(edges, memo=memo)",
            "return max_weight_pairs(edges, maxcardinality=False, memo=memo)",
        )
    ),
    Equivalent(
        _REPLIES,
        "offered_names",
        (_OFFERED_NAME,),
        ('name = str(f.get("function", {}).get("name") or "XXXX")',),
        _NO_FUNCTION,
    ),
    *(
        Equivalent(_REPLIES, "offered_names", (_OFFERED_KEY,), (after,), _NO_FUNCTION)
        for after in (
            "key = resolver.resolve_function(name) if (name and name != FINISH) or True else None",
            "key = resolver.resolve_function(name) if name or name != FINISH else None",
        )
    ),
    *(
        Equivalent(
            "sandbox.eval.steps.ultratool_metrics",
            "ultratool_selection",
            (_SELECT_ZIP,),
            (_SELECT_ZIP.replace("strict=True", strict),),
            "select_lists gives one chosen and one wanted tool per reference step: the lists "
            "always have the same length, so strictness never applies",
        )
        for strict in ("", "strict=False")
    ),
    *(
        Equivalent(
            "sandbox.eval.steps.similarity",
            "same_value",
            ("kind = type(pred)",),
            (after,),
            "a shortcut: for two strings or two integers == says what comparing their canonical "
            "JSON says, and without it every pair is compared by its canonical JSON",
        )
        for after in ("kind = None", "kind = type(None)")
    ),
    *(
        Equivalent(
            "sandbox.eval.steps.arg_scores",
            "ArgumentScores.add",
            (f"sum({score}(v, gold[k]) for v, k in zip(values, keys, strict=True)) / len(keys)",),
            (f"sum({score}(v, gold[k]) for v, k in zip(values, keys, {strict})) / len(keys)",),
            "values is made from keys, one value per key: the same length, so strictness never "
            "applies",
        )
        for score in ("same_value", "value_similarity")
        for strict in ("", "strict=False")
    ),
    *(
        Equivalent(
            "sandbox.eval.steps.matching",
            "_search",
            ('graph.add_edge(("p", i), ("g", j), weight=weight)',),
            (f'graph.add_edge(("p", i), ("{tag}", j), weight=weight)',),
            "the reference steps' node tag only has to differ from the calls' ('p'): the pairs "
            "are read back by testing for 'p' alone",
        )
        for tag in ("XXgXX", "G")
    ),
    Equivalent(
        "sandbox.eval.steps.efficiency",
        "_derived_backtracks",
        (
            "return sum(1 for prev, cur in zip(ordered, ordered[1:], strict=False) "
            "if cur.parent != prev.id)",
        ),
        ("return sum(1 for prev, cur in zip(ordered, ordered[1:], ) if cur.parent != prev.id)",),
        "the argument left out is zip's default (strict=False): the same pairs",
    ),
    *(
        Equivalent(
            "sandbox.eval.steps.measure",
            "ratio",
            (_RATIO,),
            (_RATIO.replace("Measure(value=None, n=0)", after),),
            "the argument left out is the field's default (value None, n 0): the same Measure",
        )
        for after in ("Measure(n=0)", "Measure(value=None, )")
    ),
)


def matching(
    module: str,
    function: str,
    removed: Sequence[str],
    added: Sequence[str],
    equivalents: Sequence[Equivalent] = EQUIVALENTS,
) -> Equivalent | None:
    """The entry describing this change, if one does."""
    for e in equivalents:
        if (e.module, e.function, e.before, e.after) == (
            module,
            function,
            tuple(removed),
            tuple(added),
        ):
            return e
    return None
