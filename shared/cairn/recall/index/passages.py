"""A derived index of passages (a scope's turns and chunks), scored as recall scores records.

History is immutable where it is kept: an event is never edited, a chunk never changes under
its id. So the index keeps each passage's unit vector by its id and a digest of its text (two
stores may reuse an id: chunk ids are deterministic) and never has to ask whether a vector is
stale; what it does ask, on every search, is which passages exist (the caller lists
them through the ports), so a deleted turn or an erased session is gone from the next answer
and only passages it has not seen before are embedded. The arrays (postings, the unit matrix)
are rebuilt only when that list changes (the last ``_ARRAYS_PER_SCOPE`` lists are kept, so a
caller alternating turns-only and turns-and-chunks does not rebuild on every call); vectors of
passages no longer listed are dropped once they outnumber the listed ones.

Scoring is recall's steps 1-2 over the passages: BM25 over their words, cosines against the
query, the relevance floor and the fusion of ``cairn.recall.index.scoring.screen`` (the same
function the record index calls), then a named period steers: a passage whose span overlaps a
period the query names has its relevance multiplied by ``1 + policy.temporal_weight`` (capped
at 1), as a record dated in it has.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import Counter, OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import numpy.typing as npt

from cairn.models import Scope
from cairn.ports import Embedder
from cairn.recall.cosines import row_cosines, unit, unit_rows
from cairn.recall.index.progress import embedding_listener
from cairn.recall.index.scoring import Cosines, screen
from cairn.recall.keywords import query_terms, tokenize
from cairn.recall.query import RecallPolicy
from cairn.recall.relevance import term_weight
from cairn.recall.temporal import Period

FloatArray = npt.NDArray[np.float64]
# Vectors kept per process: 200k passages of 384 float32s is ~300 MB; least recent scope first.
DEFAULT_MAX_VECTORS = 200_000
_ARRAYS_PER_SCOPE = 2
# Texts embedded between two reports: a multiple of the ONNX embedder's batch of 32.
_EMBED_STEP = 64


@dataclass(frozen=True, slots=True)
class Passage:
    """One searchable piece of history: its id (event or chunk id), when it spans, its text."""

    ref: str
    start: datetime
    end: datetime
    text: str


@dataclass(frozen=True, slots=True)
class ScoredPassage:
    """A passage's position in the caller's list, its fused relevance in [0, 1] (after the
    period steer), its cosine (``None`` without one) and its BM25 score."""

    position: int
    relevance: float
    cosine: float | None
    keyword: float
    in_period: bool


_Key = tuple[str, bytes]


def _key(passage: Passage) -> _Key:
    return passage.ref, hashlib.blake2b(passage.text.encode(), digest_size=16).digest()


@dataclass
class _Arrays:
    keys: tuple[_Key, ...]
    lengths: FloatArray
    postings: dict[str, tuple[npt.NDArray[np.int64], FloatArray]]
    matrix: npt.NDArray[np.float32] | None


@dataclass
class _ScopeCache:
    vectors: dict[_Key, npt.NDArray[np.float32]]
    arrays: OrderedDict[tuple[_Key, ...], _Arrays] = field(default_factory=OrderedDict)
    # The arrays of the last list searched with a ``version``, and that version.
    versioned: tuple[Hashable, _Arrays] | None = None


class PassageIndex:
    """Passages' vectors by id and their arrays, per (scope, embedding space), in process,
    at most ``max_vectors`` vectors (least recently searched scope evicted first)."""

    def __init__(self, *, max_vectors: int = DEFAULT_MAX_VECTORS) -> None:
        self._max_vectors = max_vectors
        self._cache: OrderedDict[tuple[Scope, str | None], _ScopeCache] = OrderedDict()
        self._lock = threading.Lock()

    def search(
        self,
        scope: Scope,
        passages: Sequence[Passage],
        query_text: str,
        *,
        embedder: Embedder | None,
        policy: RecallPolicy,
        periods: Sequence[Period] = (),
        version: Hashable | None = None,
    ) -> tuple[ScoredPassage, ...]:
        """The passages that pass recall's floor for ``query_text``, best relevance first
        (ties by position); each is scored as if the list were the whole collection.

        ``version`` names this exact list of passages (the caller's proof that it has not
        changed, e.g. the store's history generation): a search with the version the last
        versioned search of the scope had reuses its arrays without reading the list."""
        if not passages:
            return ()
        arrays = self._arrays(scope, passages, embedder, version)
        terms = tokenize(query_text)
        keyword = _bm25(arrays, terms, policy)
        found: Cosines | None = None
        if embedder is not None and arrays.matrix is not None:
            query = unit(embedder.embed([query_text])[0])
            values = row_cosines(arrays.matrix, query)
            present = np.ones(len(passages), dtype=bool)
            found = Cosines(values=values, present=present, fresh={}, reembedded=0)
        weight = _query_weight(arrays, terms)
        screened = screen(keyword, found, embedder is not None, policy, weight)
        scored: list[ScoredPassage] = []
        for position, relevance in zip(
            screened.positions.tolist(), screened.relevance.tolist(), strict=True
        ):
            passage = passages[position]
            hit = any(p.start <= passage.end and passage.start < p.end for p in periods)
            if hit:
                relevance = min(1.0, relevance * (1.0 + policy.temporal_weight))
            cosine = float(found.values[position]) if found is not None else None
            scored.append(ScoredPassage(position, relevance, cosine, float(keyword[position]), hit))
        scored.sort(key=lambda s: (-s.relevance, s.position))
        return tuple(scored)

    def _arrays(
        self,
        scope: Scope,
        passages: Sequence[Passage],
        embedder: Embedder | None,
        version: Hashable | None = None,
    ) -> _Arrays:
        key = (scope, embedder.identity.key if embedder is not None else None)
        with self._lock:
            cache = self._cache.pop(key, None) or _ScopeCache(vectors={})
            self._cache[key] = cache
        if version is not None and cache.versioned is not None and cache.versioned[0] == version:
            return cache.versioned[1]
        built = self._built(cache, passages, embedder)
        if version is not None:
            cache.versioned = (version, built)
        return built

    def _built(
        self, cache: _ScopeCache, passages: Sequence[Passage], embedder: Embedder | None
    ) -> _Arrays:
        keys = tuple(_key(p) for p in passages)
        held = cache.arrays.get(keys)
        if held is not None:
            cache.arrays.move_to_end(keys)
            return held
        matrix = None
        if embedder is not None:
            missing = [i for i, k in enumerate(keys) if k not in cache.vectors]
            if missing:
                texts = [passages[i].text for i in missing]
                made = unit_rows(np.asarray(_embedded(embedder, texts), dtype=np.float32))
                cache.vectors.update((keys[i], made[j]) for j, i in enumerate(missing))
            if len(cache.vectors) > 2 * len(keys):  # forget what went, now and then
                cache.vectors = {k: cache.vectors[k] for k in keys}
            matrix = np.stack([cache.vectors[k] for k in keys]).astype(np.float32)
        tokens = [tokenize(p.text) for p in passages]
        built = _Arrays(keys, _lengths(tokens), _postings(tokens), matrix)
        cache.arrays[keys] = built
        while len(cache.arrays) > _ARRAYS_PER_SCOPE:
            cache.arrays.popitem(last=False)
        self._evict()
        return built

    def _evict(self) -> None:
        with self._lock:
            held = sum(len(c.vectors) for c in self._cache.values())
            while held > self._max_vectors and len(self._cache) > 1:
                _, evicted = self._cache.popitem(last=False)
                held -= len(evicted.vectors)


def _embedded(embedder: Embedder, texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """``embedder.embed(texts)``; with someone listening (``embedding_listener``), in steps of
    ``_EMBED_STEP`` texts, shortest first, each step reported. The steps hold the batches one
    call would (the ONNX embedder batches 32 texts shortest first), so the vectors are the
    same bits (``tests/unit/test_passage_index.py``)."""
    listener = embedding_listener()
    if listener is None or len(texts) <= _EMBED_STEP:
        return np.asarray(embedder.embed(texts), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.zeros((len(texts), embedder.identity.dims), dtype=np.float32)
    for start in range(0, len(order), _EMBED_STEP):
        chunk = order[start : start + _EMBED_STEP]
        out[chunk] = embedder.embed([texts[i] for i in chunk])
        listener(start + len(chunk), len(texts))
    return out


def _lengths(tokens: Sequence[Sequence[str]]) -> FloatArray:
    return np.array([len(t) for t in tokens], dtype=np.float64)


def _postings(
    tokens: Sequence[Sequence[str]],
) -> dict[str, tuple[npt.NDArray[np.int64], FloatArray]]:
    rows: dict[str, list[int]] = {}
    counts: dict[str, list[float]] = {}
    for row, doc in enumerate(tokens):
        for term, count in Counter(doc).items():
            rows.setdefault(term, []).append(row)
            counts.setdefault(term, []).append(float(count))
    return {
        term: (np.array(rows[term], dtype=np.int64), np.array(counts[term], dtype=np.float64))
        for term in rows
    }


def _bm25(arrays: _Arrays, query: Sequence[str], policy: RecallPolicy) -> FloatArray:
    """BM25 of every passage (the passages are the collection), as ``bm25_scores`` computes it."""
    total = len(arrays.keys)
    scores = np.zeros(total, dtype=np.float64)
    k1, b = policy.bm25_k1, policy.bm25_b
    average = float(arrays.lengths.sum()) / total or 1.0
    norm = k1 * ((1 - b) + (b * arrays.lengths) / average)
    for term in query_terms(query):
        posting = arrays.postings.get(term)
        if posting is None:
            continue
        rows, tf = posting
        idf = math.log(1 + (total - len(rows) + 0.5) / (len(rows) + 0.5))
        scores[rows] += ((idf * tf) * (k1 + 1)) / (tf + norm[rows])
    return scores


def _query_weight(arrays: _Arrays, query: Sequence[str]) -> float:
    terms = query_terms(query)
    if not terms:
        return 0.0
    postings = arrays.postings
    frequency = [len(postings[t][0]) if t in postings else 0 for t in terms]
    return term_weight(frequency, len(arrays.keys))
