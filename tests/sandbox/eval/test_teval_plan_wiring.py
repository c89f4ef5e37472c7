"""T-Eval's plan score reads its weights from the encoder library's cosine matrix.

What it protects: T-Eval encodes the predicted names, the gold names, the predicted and the gold
arguments as four batches and takes ``util.cos_sim`` of each pair of batches; the weights are that
matrix's entries. Steps that are tied in exact arithmetic (the same call twice) are tied in that
matrix only if the library's product rounds them alike, and networkx's matching follows the last
bit. A library whose product rounds one entry a unit in the last place lower than its twin (as a
BLAS kernel may, by where an entry falls in its blocks) makes T-Eval match the plan in order
(F1 1.0); cosines computed pair by pair are exactly tied, and networkx then matches the plan
crosswise (F1 1/3). The stand-in library below is such a library.
"""

from __future__ import annotations

import importlib.machinery
import sys
import types
from typing import Any

import numpy as np
import pytest

from sandbox.eval.benchmarks.teval_plan import bertscore_match
from sandbox.eval.steps.reason_score import CosineSimilarity, cosine_of, thought_similarity

PLAN = [
    {"id": 0, "name": "geocode", "args": "{'city': 'Paris'}"},
    {"id": 1, "name": "weather", "args": "{'city': 'Paris'}"},
    {"id": 2, "name": "geocode", "args": "{'city': 'Paris'}"},
]
VECTORS = {"geocode": [1.0, 0.0, 0.0], "weather": [0.0, 1.0, 0.0], "{'city': 'Paris'}": [0, 0, 1]}


class Tensor:
    def __init__(self, array: Any) -> None:
        self.array = np.asarray(array, dtype=np.float32)

    def cpu(self) -> Tensor:
        return self

    def numpy(self) -> Any:
        return self.array


class BatchModel:
    """A ``SentenceTransformer`` stand-in that records the batches it encodes."""

    batches: list[list[str]] = []

    def __init__(self, name: str) -> None:
        self.name = name

    def encode(self, texts: Any, convert_to_tensor: bool = False, **_: Any) -> Any:
        if isinstance(texts, str):
            return np.array(VECTORS[texts], dtype=np.float32)
        BatchModel.batches.append(list(texts))
        return Tensor([VECTORS[t] for t in texts])


def cos_sim(a: Tensor, b: Tensor) -> Tensor:
    """Rows normalised, one product; an entry whose row index differs from its column index
    comes out one unit in the last place lower (the stand-in kernel's rounding)."""
    product = (a.array / np.linalg.norm(a.array, axis=1, keepdims=True)) @ (
        b.array / np.linalg.norm(b.array, axis=1, keepdims=True)
    ).T
    for i in range(product.shape[0]):
        for j in range(product.shape[1]):
            if i != j and product[i, j] > 0:
                product[i, j] = np.nextafter(product[i, j], np.float32(0))
    return Tensor(product)


@pytest.fixture
def library(monkeypatch: pytest.MonkeyPatch) -> type[BatchModel]:
    module = types.ModuleType("sentence_transformers")
    module.__spec__ = importlib.machinery.ModuleSpec("sentence_transformers", None)
    module.SentenceTransformer = BatchModel  # type: ignore[attr-defined]
    module.util = types.SimpleNamespace(cos_sim=cos_sim)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", module)
    monkeypatch.setitem(sys.modules, "sentence_transformers.util", module.util)
    BatchModel.batches = []
    return BatchModel


def test_tied_steps_match_as_the_librarys_matrix_ties_them(library: type[BatchModel]) -> None:
    """The weights are the library's matrix: the plan matched in order, F1 1.0 (pair by pair,
    every twin entry ties exactly and the matching crosses: F1 1/3)."""
    cosine = cosine_of(thought_similarity("embedding", "stand-in"))
    assert bertscore_match(PLAN, PLAN, cosine) == (1.0, 1.0, 1.0)
    names, args = [p["name"] for p in PLAN], [p["args"] for p in PLAN]
    assert library.batches == [names, names, args, args]  # T-Eval's four batches, in its order


def test_without_a_matrix_the_pairwise_cosines_are_t_evals_weights() -> None:
    """A cosine without a batched matrix (the lexical fallback, any plain function) gives its
    pairwise values as the matrix: exact ties, which networkx matches crosswise as T-Eval's own
    code does on a matrix of exact ties."""
    assert bertscore_match(PLAN, PLAN, lambda a, b: 1.0 if a == b else 0.0)[2] == pytest.approx(
        1 / 3
    )


def test_an_encoders_matrix_is_every_pairs_cosine_as_float32() -> None:
    """A backend of any encoder makes the matrix as util.cos_sim does: rows normalised, one
    product, float32; each entry is that pair's cosine (a zero vector's row is 0)."""
    vectors = {"a": [3.0, 4.0], "b": [4.0, 3.0], "c": [-1.0, 0.0], "z": [0.0, 0.0]}
    backend = CosineSimilarity("table", lambda text: vectors[text])
    matrix = cosine_of(backend).matrix(["a", "c", "z"], ["a", "b"])  # type: ignore[attr-defined]
    assert matrix.dtype == np.float32 and matrix.shape == (3, 2)
    expected = [[1.0, 24 / 25], [-3 / 5, -4 / 5], [0.0, 0.0]]
    assert np.allclose(matrix, np.array(expected), atol=1e-6)
    pairwise = [[backend.cosine(x, y) for y in "ab"] for x in "acz"]
    assert np.allclose(np.array(pairwise), np.array(expected))
