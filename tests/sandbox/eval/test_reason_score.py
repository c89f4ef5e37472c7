import importlib.util

import pytest
from _step_builders import APIS, REF_STEPS, act

from sandbox.errors import ConfigError
from sandbox.eval.steps.actions import reference_actions
from sandbox.eval.steps.reason_score import (
    DEFAULT_EMBEDDING_MODEL,
    LexicalSimilarity,
    score_reasoning,
    similarity_label,
    thought_similarity,
)

GOLD = reference_actions(REF_STEPS, APIS)


def test_same_words_any_order_score_one():
    sim = LexicalSimilarity()
    assert sim("Paris weather current the Get in", "Get the current weather in Paris") == 1.0
    assert sim("", "Get the weather") == 0.0


def test_mean_over_matched_pairs_with_a_reference_thought():
    pred = [
        act("maps", "geocode", thought="Find where Paris is."),
        act("weatherly", "get_weather", thought="zzzz"),
    ]
    gold = [GOLD[0], GOLD[1].model_copy(update={"thought": ""}), GOLD[2]]
    m = score_reasoning(pred, gold, [(0, 0), (1, 1)])
    assert m.n == 1 and m.value == 1.0
    m = score_reasoning(pred, GOLD, [(0, 0), (1, 1)])
    assert m.n == 2 and m.value == pytest.approx(
        (1.0 + LexicalSimilarity()("zzzz", GOLD[1].thought)) / 2
    )
    assert score_reasoning(pred, GOLD, []).value is None


def test_asking_for_embeddings_without_the_extra_is_a_clear_error(monkeypatch):
    # the extra is "not installed" as far as the import system can tell
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a, **k: None)
    with pytest.raises(ConfigError, match=r"\[embeddings\]"):
        thought_similarity("embedding")
    with pytest.raises(ConfigError, match="unknown thought similarity"):
        thought_similarity("telepathy")
    assert thought_similarity("lexical").name == "lexical"


def test_auto_prefers_embeddings_and_names_its_fallback(monkeypatch):
    # without the extra, the default falls back to the lexical measure and says why
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a, **k: None)
    auto = thought_similarity()
    assert auto.name == "lexical"
    assert similarity_label(auto) == "lexical (fallback: the embeddings extra is not installed)"
    assert similarity_label(thought_similarity("lexical")) == "lexical"


@pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None,
    reason="the embeddings extra (sentence-transformers) is not installed",
)
def test_auto_with_the_extra_is_t_evals_model():
    sim = thought_similarity()
    if sim.name == "lexical":  # installed, but the model is not available offline
        pytest.skip(similarity_label(sim))
    assert sim.name == f"embedding:{DEFAULT_EMBEDDING_MODEL}"
    assert DEFAULT_EMBEDDING_MODEL.endswith("all-mpnet-base-v2")
    assert sim("Get the weather in Paris", "Get the weather in Paris") == pytest.approx(1.0)
