"""A tiny encoder for the reference tables: word-count vectors, so cosines are worked by hand.

A text's vector counts its ``\\w+`` words, lower-cased; the cosine of two texts is the dot
product of their counts over the product of their lengths (0 when either has no word). "same
wiring, any encoder": the reference protocols call ``cosine`` where T-Eval calls
``util.cos_sim`` of sentence embeddings, and the cross-check against T-Eval's own code (outside
the project) gives its ``SentenceTransformer`` this same encoder.
"""

from __future__ import annotations

import math
import re
from collections import Counter

WORD = re.compile(r"\w+")


def words(text: str) -> Counter[str]:
    return Counter(WORD.findall(text.lower()))


def token_cosine(a: str, b: str) -> float:
    u, v = words(a), words(b)
    norm = math.sqrt(sum(c * c for c in u.values())) * math.sqrt(sum(c * c for c in v.values()))
    return sum(u[w] * v[w] for w in u) / norm if norm else 0.0


class TokenCosine:
    """A thought similarity (``ThoughtSimilarity``) with T-Eval's cosine wiring (``cosine``)."""

    name = "token-cosine"

    def cosine(self, a: str, b: str) -> float:
        return token_cosine(a, b)

    def __call__(self, pred: str, gold: str) -> float:
        return min(1.0, max(0.0, token_cosine(pred, gold)))
