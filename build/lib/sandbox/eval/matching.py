"""Maximum-weight matching of a bipartite graph of predicted actions and reference steps.

The step metrics (``actions.match_actions``, ``plan_score.plan_score``) pair actions with
reference steps through ``networkx.max_weight_matching``. Most episodes need no search: when no
action and no reference step has two candidate edges, and every weight is positive, the only
maximum-weight matching is the set of all edges, which is what networkx would return. Only the
other graphs are handed to networkx (imported then, not with this module); a caller scoring
many episodes may keep their matchings in a ``MatchMemo`` (the same graph gives the same pairs).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["Edge", "MatchMemo", "max_weight_pairs"]

Edge = tuple[int, int, float]
"""``(pred index, gold index, weight)``."""

MatchMemo = dict[tuple[bool, tuple[Edge, ...]], list[tuple[int, int]]]
"""Matchings already searched: ``(maxcardinality, edges)`` -> pairs."""


def max_weight_pairs(
    edges: Sequence[Edge], *, maxcardinality: bool = False, memo: MatchMemo | None = None
) -> list[tuple[int, int]]:
    """``(pred index, gold index)`` pairs of a maximum-weight matching, sorted.

    ``maxcardinality``: among matchings with the most pairs, the heaviest (networkx's flag)."""
    if not edges:
        return []
    preds = {i for i, _, _ in edges}
    golds = {j for _, j, _ in edges}
    if len(preds) == len(edges) and len(golds) == len(edges) and all(w > 0 for *_, w in edges):
        return sorted((i, j) for i, j, _ in edges)
    if memo is None:
        return _search(edges, maxcardinality)
    key = (maxcardinality, tuple(edges))
    if key not in memo:
        memo[key] = _search(edges, maxcardinality)
    return list(memo[key])


def _search(edges: Sequence[Edge], maxcardinality: bool) -> list[tuple[int, int]]:
    import networkx as nx

    graph: nx.Graph[tuple[str, int]] = nx.Graph()
    for i, j, weight in edges:
        graph.add_edge(("p", i), ("g", j), weight=weight)
    matching = nx.max_weight_matching(graph, maxcardinality=maxcardinality)
    return sorted((a[1], b[1]) if a[0] == "p" else (b[1], a[1]) for a, b in matching)
