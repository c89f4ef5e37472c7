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

The same backend scores the probe's ``understand`` (the similarity of the argument objects' text,
``args_similarity``) and the reference protocols' cosines (``cosine_of``: T-Eval's wiring).
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from rapidfuzz import fuzz

from mock_tools.canonical import dumps_canonical
from sandbox.errors import ConfigError
from sandbox.eval.steps.actions import Action
from sandbox.eval.steps.measure import Measure, mean_measure

__all__ = [
    "DEFAULT_EMBEDDING_MODEL",
    "SIMILARITY_KINDS",
    "CosineSimilarity",
    "EmbeddingSimilarity",
    "LexicalSimilarity",
    "PlainCosine",
    "ThoughtSimilarity",
    "args_similarity",
    "cosine_of",
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


class CosineSimilarity:
    """Cosine similarity of text embeddings made by ``encode`` (any encoder).

    ``__call__`` is the project's rule (0 when either text is blank, clipped to [0, 1]);
    ``cosine`` is the plain cosine, which the reference protocols wire as their code does
    (T-Eval: ``np.maximum(util.cos_sim(a, b), 0)``, blank texts embedded like any other)."""

    def __init__(self, name: str, encode: Callable[[str], Sequence[float]]) -> None:
        self.name = name
        self._encode = encode
        self._memo: dict[str, Any] = {}

    def _embed(self, text: str) -> Any:
        if text not in self._memo:
            self._memo[text] = self._encode(text)
        return self._memo[text]

    def cosine(self, a: str, b: str) -> float:
        u, v = self._embed(a), self._embed(b)
        norm = math.sqrt(sum(x * x for x in u)) * math.sqrt(sum(y * y for y in v))
        return float(sum(x * y for x, y in zip(u, v, strict=True)) / norm) if norm else 0.0

    def matrix(self, a: Sequence[str], b: Sequence[str]) -> Any:
        """The cosines of every text of ``a`` with every text of ``b`` as one float32 array,
        made as ``util.cos_sim`` makes it: the rows normalised, then one matrix product."""
        import numpy as np  # heavy: only for T-Eval's plan score

        def unit_rows(texts: Sequence[str]) -> Any:
            rows = np.array([self._embed(t) for t in texts], dtype=np.float32)
            rows = rows.reshape(len(texts), -1)
            norms = np.linalg.norm(rows, axis=1, keepdims=True)
            return rows / np.maximum(norms, np.float32(1e-12))

        return unit_rows(a) @ unit_rows(b).T

    def __call__(self, pred: str, gold: str) -> float:
        if not pred.strip() or not gold.strip():
            return 0.0
        return min(1.0, max(0.0, self.cosine(pred, gold)))


class EmbeddingSimilarity(CosineSimilarity):
    """Cosine similarity of sentence embeddings (needs the ``embeddings`` extra)."""

    def __init__(self, model_name: str = DEFAULT_EMBEDDING_MODEL) -> None:
        from sentence_transformers import SentenceTransformer  # optional extra, imported lazily

        model: Any = SentenceTransformer(model_name)
        self._model = model
        super().__init__(
            f"embedding:{model_name}", lambda text: model.encode(text, normalize_embeddings=True)
        )

    def cosine(self, a: str, b: str) -> float:
        return float((self._embed(a) * self._embed(b)).sum())  # unit vectors: the dot product

    def matrix(self, a: Sequence[str], b: Sequence[str]) -> Any:
        """T-Eval's plan wiring: ``util.cos_sim(encode(a), encode(b))``, each list encoded in one
        batch (``convert_to_tensor=True``), as a float32 numpy array."""
        from sentence_transformers import util  # optional extra, imported lazily

        left = self._model.encode(list(a), convert_to_tensor=True)
        right = self._model.encode(list(b), convert_to_tensor=True)
        return util.cos_sim(left, right).cpu().numpy()


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


class PlainCosine:
    """An embedding backend's plain cosine (``cosine``), with its batched ``matrix``."""

    def __init__(self, similarity: CosineSimilarity) -> None:
        self.similarity = similarity

    def __call__(self, a: str, b: str) -> float:
        return self.similarity.cosine(a, b)

    def matrix(self, a: Sequence[str], b: Sequence[str]) -> Any:
        return self.similarity.matrix(a, b)


def cosine_of(similarity: ThoughtSimilarity) -> Callable[[str, str], float]:
    """The plain cosine of an embedding backend (``CosineSimilarity.cosine``, and its
    ``matrix`` for T-Eval's plan); a backend without embeddings (the lexical fallback) stands in
    with its own similarity (its matrix: its pairwise values)."""
    if isinstance(similarity, CosineSimilarity):
        return PlainCosine(similarity)
    cosine = getattr(similarity, "cosine", None)
    return cosine if callable(cosine) else similarity


def args_similarity(
    pred: dict[str, Any], gold: dict[str, Any], similarity: ThoughtSimilarity
) -> float:
    """The probe's ``understand``: the backend's similarity of the two argument objects' text
    (canonical JSON), after T-Eval's December 2023 understand, which embeds Python's ``str`` of
    the dicts (``teval-v1`` computes that one)."""
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
