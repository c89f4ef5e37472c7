"""Reason: how close the agent's thoughts are to the reference thoughts at matched steps.

T-Eval (Chen et al. 2024, the reason dimension; ``teval/evaluators/
reason_retrieve_understand_evaluator.py``): the cosine similarity of sentence embeddings
(``all-mpnet-base-v2``) of the predicted and the gold thought, clipped at 0. T-Eval asks it of a
teacher-forced next step (``sandbox probe``); on an episode it is asked at the steps matched to
the reference: for every executed call matched to a reference step (``actions.match_actions``:
same API, best arguments), the thought of the turn that made the call against the reference
step's thought. Reference steps without a thought are skipped; an agent turn without text scores
0. The episode value is the mean over the compared pairs; with no pair the dimension does not
apply (the plan and selection scores already say that nothing matched).

Backends (``thought_similarity``; the one that scored is recorded with the scores):

- ``auto`` (the default): T-Eval's embeddings (``EmbeddingSimilarity`` with
  ``all-mpnet-base-v2``) when the optional ``embeddings`` extra (``sentence-transformers``) is
  installed and the model loads; otherwise the lexical fallback, with the reason recorded;
- ``embedding[:MODEL]``: embeddings or a ``ConfigError``, never a silent switch;
- ``lexical``: ``rapidfuzz.fuzz.token_sort_ratio / 100`` (word order does not matter, wording
  does), the named fallback.

The same backend scores T-Eval's ``understand`` in probe mode (the similarity of the argument
objects' text, ``args_similarity``).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Any, Protocol

from rapidfuzz import fuzz

from mock_tools.canonical import dumps_canonical
from sandbox.errors import ConfigError
from sandbox.eval.actions import Action
from sandbox.eval.measure import Measure, mean_measure

__all__ = [
    "DEFAULT_EMBEDDING_MODEL",
    "SIMILARITY_KINDS",
    "EmbeddingSimilarity",
    "LexicalSimilarity",
    "ThoughtSimilarity",
    "args_similarity",
    "score_reasoning",
    "similarity_label",
    "thought_similarity",
]

DEFAULT_EMBEDDING_MODEL = "sentence-transformers/all-mpnet-base-v2"
"""T-Eval's ``bert_score_model`` default."""
SIMILARITY_KINDS = ("auto", "embedding", "lexical")


class ThoughtSimilarity(Protocol):
    name: str

    def __call__(self, pred: str, gold: str) -> float: ...


class LexicalSimilarity:
    """``token_sort_ratio / 100``: 1.0 for the same words in any order.

    ``fallback_reason`` says why ``auto`` fell back to it (None when asked for by name).
    """

    name = "lexical"

    def __init__(self, fallback_reason: str | None = None) -> None:
        self.fallback_reason = fallback_reason

    def __call__(self, pred: str, gold: str) -> float:
        return float(fuzz.token_sort_ratio(pred, gold)) / 100.0


class EmbeddingSimilarity:
    """Cosine similarity of sentence embeddings (needs the ``embeddings`` extra)."""

    def __init__(self, model_name: str = DEFAULT_EMBEDDING_MODEL) -> None:
        from sentence_transformers import SentenceTransformer  # optional extra, imported lazily

        self.name = f"embedding:{model_name}"
        self._model: Any = SentenceTransformer(model_name)
        self._memo: dict[str, Any] = {}

    def _embed(self, text: str) -> Any:
        if text not in self._memo:
            self._memo[text] = self._model.encode(text, normalize_embeddings=True)
        return self._memo[text]

    def __call__(self, pred: str, gold: str) -> float:
        if not pred.strip() or not gold.strip():
            return 0.0
        cos = float((self._embed(pred) * self._embed(gold)).sum())
        return min(1.0, max(0.0, cos))


def thought_similarity(kind: str = "auto", model_name: str | None = None) -> ThoughtSimilarity:
    """The backend named by ``kind`` (``auto``, ``embedding`` or ``lexical``; see module doc).

    ``embedding`` without the extra is an error, never a silent switch to lexical: the score
    would otherwise be labelled with a method that did not produce it. ``auto`` falls back, and
    the returned ``LexicalSimilarity`` says why.
    """
    if kind == "lexical":
        return LexicalSimilarity()
    if kind not in SIMILARITY_KINDS:
        raise ConfigError(
            f"unknown thought similarity {kind!r}: auto, embedding[:MODEL] or lexical"
        )
    model = model_name or DEFAULT_EMBEDDING_MODEL
    if importlib.util.find_spec("sentence_transformers") is None:
        if kind == "auto":
            return LexicalSimilarity("the embeddings extra is not installed")
        raise ConfigError(
            "embedding similarity needs the optional extra: .venv/bin/pip install -e "
            "'.[embeddings]' (and the model available offline), or use lexical"
        )
    try:
        return EmbeddingSimilarity(model)
    except Exception as e:  # the library raises many kinds (network, files, versions)
        if kind == "auto":
            return LexicalSimilarity(f"embedding model {model} did not load ({type(e).__name__})")
        raise ConfigError(f"embedding model {model} did not load: {e}") from e


def similarity_label(similarity: ThoughtSimilarity) -> str:
    """The backend's name, with the reason when ``auto`` fell back to lexical."""
    reason = getattr(similarity, "fallback_reason", None)
    return f"{similarity.name} (fallback: {reason})" if reason else similarity.name


def args_similarity(
    pred: dict[str, Any], gold: dict[str, Any], similarity: ThoughtSimilarity
) -> float:
    """T-Eval's ``understand``: the backend's similarity of the two argument objects' text
    (canonical JSON; T-Eval embeds Python's ``str`` of the dicts)."""
    if not pred and not gold:
        return 1.0
    return similarity(dumps_canonical(pred), dumps_canonical(gold))


def score_reasoning(
    pred: Sequence[Action],
    gold: Sequence[Action],
    pairs: Sequence[tuple[int, int]],
    similarity: ThoughtSimilarity | None = None,
) -> Measure:
    """Mean thought similarity over matched ``(pred, gold)`` pairs whose reference has a thought."""
    sim = similarity or LexicalSimilarity()
    values = [
        sim(pred[i].thought.strip(), gold[j].thought.strip())
        for i, j in pairs
        if gold[j].thought.strip()
    ]
    return mean_measure(values)
