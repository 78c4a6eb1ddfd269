"""A deterministic bag-of-words embedder, for unit tests only.

It has no notion of meaning: texts are close only when they share words or word fragments.
Use it where a test needs vectors that are cheap, stable across processes and platforms, and
plausibly ordered ("tea" is nearer "tea" than "stocks"); use ``OnnxEmbedder`` for anything real.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from functools import lru_cache

import numpy as np

from cairn.models import EmbedderId
from cairn.ports import FloatMatrix

MODEL_ID = "cairn-hashing-v1"
_WORD = re.compile(r"\w+")
# Trigrams let "likes" and "like" share most of their mass; words still dominate.
_TRIGRAM_WEIGHT = 0.5


def _features(text: str) -> Iterator[tuple[str, float]]:
    for word in _WORD.findall(text.lower()):
        yield "w:" + word, 1.0
        padded = f"<{word}>"
        for start in range(len(padded) - 2):
            yield "t:" + padded[start : start + 3], _TRIGRAM_WEIGHT


@lru_cache(maxsize=65_536)
def _bucket(feature: str, dims: int) -> tuple[int, float]:
    # blake2b, not hash(): Python salts str hashes per process, which would make vectors differ
    # between runs and break anything stored.
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "big")
    sign = 1.0 if value & 1 else -1.0
    return (value >> 1) % dims, sign


class HashingEmbedder:
    """Signed feature hashing of lowercased words and their character trigrams into ``dims``
    buckets; rows are L2-normalised float32, and a text with no word characters maps to zeros.

    For unit tests only: it captures shared words, not meaning.
    """

    def __init__(self, dims: int = 256) -> None:
        self._identity = EmbedderId(model_id=MODEL_ID, dims=dims)

    @property
    def identity(self) -> EmbedderId:
        return self._identity

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """One row per text, shape ``(len(texts), dims)``, unit norm (or all zeros)."""
        dims = self._identity.dims
        matrix = np.zeros((len(texts), dims), dtype=np.float64)
        for row, text in enumerate(texts):
            for feature, weight in _features(text):
                bucket, sign = _bucket(feature, dims)
                matrix[row, bucket] += sign * weight
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        # A tokenless text keeps its zero row: dividing by 1 instead of 0 avoids NaN.
        matrix /= np.where(norms > 0.0, norms, 1.0)
        return matrix.astype(np.float32)
