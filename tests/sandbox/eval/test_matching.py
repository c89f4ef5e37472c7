"""``max_weight_pairs`` gives exactly networkx's matching, with or without its shortcuts."""

from __future__ import annotations

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.eval.steps.matching import Edge, MatchMemo, max_weight_pairs


def _networkx(edges: list[Edge], maxcardinality: bool) -> list[tuple[int, int]]:
    graph: nx.Graph[tuple[str, int]] = nx.Graph()
    for i, j, w in edges:
        graph.add_edge(("p", i), ("g", j), weight=w)
    matching = nx.max_weight_matching(graph, maxcardinality=maxcardinality)
    return sorted((a[1], b[1]) if a[0] == "p" else (b[1], a[1]) for a, b in matching)


def _edges(draw_pairs: list[tuple[int, int]], weights: list[float]) -> list[Edge]:
    seen: dict[tuple[int, int], float] = {}
    for (i, j), w in zip(draw_pairs, weights, strict=False):
        seen.setdefault((i, j), w)
    return [(i, j, w) for (i, j), w in seen.items()]


_pairs = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=12)
_weights = st.lists(st.sampled_from([-0.5, 0.0, 0.25, 0.8, 0.9, 1.0, 2.0, 2.5]), min_size=12)


@settings(max_examples=300, deadline=None)
@given(_pairs, _weights, st.booleans())
def test_same_pairs_as_networkx(pairs, weights, maxcardinality) -> None:
    edges = _edges(pairs, weights)
    expected = _networkx(edges, maxcardinality)
    assert max_weight_pairs(edges, maxcardinality=maxcardinality) == expected
    memo: MatchMemo = {}
    assert max_weight_pairs(edges, maxcardinality=maxcardinality, memo=memo) == expected
    assert max_weight_pairs(edges, maxcardinality=maxcardinality, memo=memo) == expected


def test_disjoint_positive_edges_are_all_taken() -> None:
    edges = [(0, 1, 0.9), (2, 0, 1.5), (1, 3, 0.01)]
    assert max_weight_pairs(edges) == [(0, 1), (1, 3), (2, 0)] == _networkx(edges, False)


def test_a_competing_edge_is_searched_and_remembered() -> None:
    edges = [(0, 0, 1.0), (1, 0, 2.0), (1, 1, 1.5)]
    memo: MatchMemo = {}
    assert max_weight_pairs(edges, memo=memo) == _networkx(edges, False) == [(0, 0), (1, 1)]
    assert memo == {(False, tuple(edges)): [(0, 0), (1, 1)]}


def test_no_edges_no_pairs() -> None:
    assert max_weight_pairs([], maxcardinality=True) == []
