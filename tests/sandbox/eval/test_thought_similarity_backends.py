"""The thought-similarity backends: the cosine of any encoder, the embedding backend's wiring,
and what ``thought_similarity`` hands back when the embedding model cannot be had.

Vectors are chosen by hand so every cosine is worked out on paper; the embedding backend is
tried against a stand-in ``sentence_transformers`` module (the real extra is optional and needs
a model download), which records what it was asked.
"""

from __future__ import annotations

import importlib.machinery
import math
import sys
import types
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from sandbox.errors import ConfigError
from sandbox.eval.steps.actions import Action
from sandbox.eval.steps.reason_score import (
    DEFAULT_EMBEDDING_MODEL,
    CosineSimilarity,
    LexicalSimilarity,
    args_similarity,
    cosine_of,
    score_reasoning,
    similarity_label,
    thought_similarity,
)

VECTORS: dict[str, list[float]] = {
    "east": [1.0, 0.0],
    "north": [0.0, 1.0],
    "north-east": [1.0, 1.0],
    "west": [-1.0, 0.0],
    "nowhere": [0.0, 0.0],
    # its float cosine with itself is 1.0000000000000002
    "rounding": [2.2, 0.8, 2.8],
}


class Encoder:
    """Looks texts up in ``VECTORS`` and counts how often each was asked for."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, text: str) -> Sequence[float]:
        self.asked.append(text)
        return VECTORS[text]


def test_the_cosine_of_an_encoder_is_the_angle_between_its_vectors() -> None:
    """cosine: dot product over the product of the norms, signed; 0 for a zero vector."""
    sim = CosineSimilarity("compass", Encoder())
    assert sim.name == "compass"
    assert sim.cosine("east", "north-east") == pytest.approx(1 / math.sqrt(2))
    assert sim.cosine("north-east", "north") == pytest.approx(1 / math.sqrt(2))
    assert sim.cosine("east", "north") == 0.0
    assert sim.cosine("east", "west") == pytest.approx(-1.0)
    assert sim.cosine("nowhere", "east") == 0.0
    assert sim.cosine("east", "nowhere") == 0.0


def test_vectors_of_different_lengths_are_an_error_not_a_truncated_cosine() -> None:
    sim = CosineSimilarity("compass", Encoder())
    with pytest.raises(ValueError):
        sim.cosine("east", "rounding")


def test_the_project_similarity_clips_the_cosine_to_zero_and_one() -> None:
    """An opposite thought scores 0, not -1; a text against itself scores exactly 1 even when
    the float cosine rounds above it."""
    sim = CosineSimilarity("compass", Encoder())
    assert sim("east", "west") == 0.0
    assert sim("east", "north-east") == pytest.approx(1 / math.sqrt(2))
    assert sim.cosine("rounding", "rounding") > 1.0
    assert sim("rounding", "rounding") == 1.0


def test_blank_thoughts_score_zero_without_being_embedded() -> None:
    """The project's rule: a blank text on either side is no thought (0), and the encoder is not
    asked about it; T-Eval's wiring (``cosine``) embeds it like any other text."""
    encoder = Encoder()
    sim = CosineSimilarity("compass", encoder)
    assert sim("  ", "east") == 0.0
    assert sim("east", "\n") == 0.0
    assert encoder.asked == []


def test_each_text_is_embedded_once_per_backend() -> None:
    """A run repeats thoughts across episodes: each distinct text is encoded once."""
    encoder = Encoder()
    sim = CosineSimilarity("compass", encoder)
    sim("east", "north")
    sim.cosine("north", "east")
    sim("east", "east")
    assert sorted(encoder.asked) == ["east", "north"]


class FakeModel:
    """A ``SentenceTransformer`` stand-in: vectors from ``VECTORS``, unit length only when the
    caller asks for normalised embeddings (as the real one)."""

    loaded: list[str] = []

    def __init__(self, model_name: str) -> None:
        if model_name == "broken/model":
            raise RuntimeError("no such model offline")
        FakeModel.loaded.append(model_name)

    def encode(self, text: str, normalize_embeddings: bool = False) -> Any:
        v = np.array(VECTORS[text], dtype=float)
        return v / np.linalg.norm(v) if normalize_embeddings else v


@pytest.fixture
def fake_extra(monkeypatch: pytest.MonkeyPatch) -> type[FakeModel]:
    module = types.ModuleType("sentence_transformers")
    module.__spec__ = importlib.machinery.ModuleSpec("sentence_transformers", None)
    module.SentenceTransformer = FakeModel  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", module)
    FakeModel.loaded = []
    return FakeModel


def test_the_embedding_backend_loads_t_evals_model_by_default(fake_extra: type[FakeModel]) -> None:
    """``auto`` and ``embedding`` with the extra: all-mpnet-base-v2, named with its model."""
    auto = thought_similarity()
    assert auto.name == f"embedding:{DEFAULT_EMBEDDING_MODEL}"
    assert similarity_label(auto) == f"embedding:{DEFAULT_EMBEDDING_MODEL}"
    named = thought_similarity("embedding", "my/encoder")
    assert named.name == "embedding:my/encoder"
    assert fake_extra.loaded == [DEFAULT_EMBEDDING_MODEL, "my/encoder"]


def test_the_embedding_cosine_is_that_of_the_normalised_embeddings(
    fake_extra: type[FakeModel],
) -> None:
    """The backend asks for unit vectors and takes their dot product: the true cosine, which
    the raw vectors' dot product (2 for north-east with itself) is not."""
    sim = thought_similarity("embedding")
    assert cosine_of(sim)("north-east", "north-east") == pytest.approx(1.0)
    assert cosine_of(sim)("east", "north-east") == pytest.approx(1 / math.sqrt(2))
    assert cosine_of(sim)("east", "west") == pytest.approx(-1.0)  # T-Eval's wiring clips later
    assert sim("east", "west") == 0.0


def test_a_model_that_does_not_load_is_an_error_or_a_named_fallback(
    fake_extra: type[FakeModel],
) -> None:
    """``embedding``: a one-line error naming the model and why; ``auto``: the lexical fallback,
    labelled with the model and the kind of failure."""
    with pytest.raises(ConfigError) as err:
        thought_similarity("embedding", "broken/model")
    assert str(err.value) == "embedding model broken/model did not load: no such model offline"
    auto = thought_similarity("auto", "broken/model")
    assert isinstance(auto, LexicalSimilarity)
    assert similarity_label(auto) == (
        "lexical (fallback: embedding model broken/model did not load (RuntimeError))"
    )


def test_the_plain_cosine_of_a_backend_without_embeddings_is_its_own_similarity() -> None:
    """The lexical fallback stands in for the cosine in the reference protocols' wiring."""
    lexical = LexicalSimilarity()
    assert cosine_of(lexical) is lexical
    compass = CosineSimilarity("compass", Encoder())
    assert cosine_of(compass)("east", "west") == pytest.approx(-1.0)
    assert similarity_label(compass) == "compass"  # a backend that never falls back


class Recorder:
    name = "recorder"

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    def __call__(self, pred: str, gold: str) -> float:
        self.asked.append((pred, gold))
        return 0.25


def test_probe_understand_compares_the_canonical_json_of_both_argument_objects() -> None:
    """Key order and spacing do not matter (canonical JSON); two empty objects agree fully
    without asking the backend."""
    rec = Recorder()
    assert args_similarity({}, {}, rec) == 1.0
    assert rec.asked == []
    assert args_similarity({"b": 1, "a": "x"}, {"a": "x"}, rec) == 0.25
    assert args_similarity({}, {"a": "x"}, rec) == 0.25
    assert args_similarity({"a": "x"}, {}, rec) == 0.25
    assert rec.asked == [('{"a":"x","b":1}', '{"a":"x"}'), ("{}", '{"a":"x"}'), ('{"a":"x"}', "{}")]


def test_reason_compares_the_stripped_thoughts_of_matched_pairs_lexically_by_default() -> None:
    """Surrounding blanks are no part of a thought; without a backend the lexical one scores,
    and a reference step without a thought is left out."""
    pred = [Action(name="a", thought="  Find Paris \n"), Action(name="b", thought="zz")]
    gold = [Action(name="a", thought="Find Paris"), Action(name="b", thought="  ")]
    got = score_reasoning(pred, gold, [(0, 0), (1, 1)])
    assert (got.value, got.n) == (1.0, 1)
    rec = Recorder()
    score_reasoning(pred, gold, [(0, 0), (1, 1)], rec)
    assert rec.asked == [("Find Paris", "Find Paris")]


def test_asking_for_embeddings_without_the_extra_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a, **k: None)
    with pytest.raises(ConfigError) as err:
        thought_similarity("embedding")
    assert str(err.value) == (
        "embedding similarity needs the optional extra: .venv/bin/pip install -e "
        "'.[embeddings]' (and the model available offline), or use lexical"
    )
