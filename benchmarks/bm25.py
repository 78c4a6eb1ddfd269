"""A small Okapi BM25 (Lucene's idf) over numpy, the keyword baseline of the quality benchmark.

Tokens follow bm25s' defaults: lowercased runs of two or more word characters, Lucene's 33
English stopwords dropped, then a light suffix stemmer (plurals, -ing, -ed, -ly). The README's
baseline used bm25s with the Snowball stemmer; this one needs no extra dependency.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

_TOKEN = re.compile(r"(?u)\b\w\w+\b")
# Lucene's English stop set, as bm25s ships it.
_LUCENE_STOPWORDS = """
a an and are as at be but by for if in into is it no not of on or such that the their then
there these they this to was will with
"""
STOPWORDS = frozenset(_LUCENE_STOPWORDS.split())
_VOWEL = re.compile(r"[aeiouy]")


def stem(word: str) -> str:
    """A light English stemmer: enough to join "paints", "painted", "painting" and "paint"."""
    if len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ingly", "edly", "ing", "ed", "ly"):
        root = word[: -len(suffix)]
        if word.endswith(suffix) and len(root) >= 3 and _VOWEL.search(root):
            # "stopped" -> "stop"; roots keep no final "e", so "hoping" meets "hope" at "hop".
            if len(root) > 3 and root[-1] == root[-2] and root[-1] not in "lsz":
                root = root[:-1]
            return root
    # Dropping a final "e" joins "love", "loves" and "loved" (all "lov").
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def tokenize(text: str) -> list[str]:
    """Index terms of a text, in order, with repeats."""
    return [stem(t) for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


class BM25:
    """Okapi BM25 over a fixed set of documents; ``scores`` has one entry per document."""

    def __init__(self, documents: Sequence[str], *, k1: float = 1.5, b: float = 0.75) -> None:
        counts = [Counter(tokenize(doc)) for doc in documents]
        self._vocabulary: dict[str, int] = {}
        for count in counts:
            for term in count:
                self._vocabulary.setdefault(term, len(self._vocabulary))
        tf = np.zeros((len(documents), len(self._vocabulary)), dtype=np.float32)
        for row, count in enumerate(counts):
            for term, n in count.items():
                tf[row, self._vocabulary[term]] = n
        lengths = tf.sum(axis=1)
        average = max(float(lengths.mean()), 1e-9) if len(documents) else 1.0
        df = (tf > 0).sum(axis=0)
        n_docs = len(documents)
        self._idf = np.log1p((n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)
        norm = k1 * (1.0 - b + b * lengths / average)
        self._weights: npt.NDArray[np.float32] = (tf * (k1 + 1.0)) / (tf + norm[:, None])

    def scores(self, query: str) -> npt.NDArray[np.float32]:
        """BM25 score of every document for ``query`` (zero where no term matches)."""
        columns = [self._vocabulary[t] for t in tokenize(query) if t in self._vocabulary]
        if not columns:
            return np.zeros(self._weights.shape[0], dtype=np.float32)
        picked = np.asarray(columns)
        result: npt.NDArray[np.float32] = self._weights[:, picked] @ self._idf[picked]
        return result
