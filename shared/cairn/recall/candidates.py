"""Step 1, candidates: every live head in the scope (under the filters), with a BM25 score and,
where a vector in the query embedder's space exists or can be made, an exact cosine.

Vectors are fetched only for the query embedder's identity, so two spaces are never compared.
A head without one is re-embedded here (at most ``policy.max_reembed`` per recall, the ones
with the best keyword scores first; the vector is used, not stored: recall never writes).
Any other head is still a candidate, scored by keywords alone; none is silently dropped.

A ``RecordFilter`` (RetrieveMemoryRecords' metadata filters and strategy id) narrows the heads
before anything is scored, exactly as the namespace prefix does: the filtered heads are the
whole collection BM25 counts over, so a record that matches is never lost behind a hundred
better ones that do not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

import numpy as np

from cairn.models import RecordVersion, Scope, Trust, VersionRef
from cairn.ports import MAX_PAGE_SIZE, Embedder, FloatVector, RecordStore
from cairn.recall.cosines import row_cosines, unit, unit_rows
from cairn.recall.keywords import bm25_scores, tokenize
from cairn.recall.query import RecallPolicy, RecallQuery
from cairn.recall.subject import embedding_text, only_the_subject_matched
from cairn.scope_guard import in_scope

# Whether a live head may be recalled, decided from the version alone (never from a score).
RecordFilter = Callable[[RecordVersion], bool]


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def epoch_micros(when: datetime) -> int:
    """``when`` (timezone-aware) as whole microseconds since the epoch: exact, so the age
    ``now - when`` in microseconds is the one ``timedelta`` holds."""
    return (when - _EPOCH) // _MICROSECOND


class LazyVersion(Protocol):
    """What ranking and dedup read of a row without parsing its version (a recall index's
    row), each the value the version holds; ``load`` parses the version itself."""

    @property
    def record_id(self) -> str: ...

    @property
    def confidence(self) -> float: ...

    @property
    def last_seen_micros(self) -> int: ...

    @property
    def content_digest(self) -> str: ...

    @property
    def trusted(self) -> bool: ...

    def load(self) -> RecordVersion: ...


class Candidate:
    """A live head with its keyword score and, if it has a vector, its unit vector and cosine.

    Built from a parsed ``version``, or from a ``lazy`` row whose version is parsed only when
    ``version`` is first read: ranking and dedup read ``record_id``, ``confidence``,
    ``last_seen_micros``, ``content_digest`` and ``trusted``, which a lazy row answers without
    parsing, so only the entries a block shows are parsed.
    """

    __slots__ = ("_lazy", "_version", "cosine", "keyword", "tokens", "vector")

    def __init__(
        self,
        version: RecordVersion | None = None,
        *,
        tokens: tuple[str, ...],
        keyword: float,
        vector: FloatVector | None = None,
        cosine: float | None = None,
        lazy: LazyVersion | None = None,
    ) -> None:
        if (version is None) == (lazy is None):
            raise ValueError("a candidate needs exactly one of a version and a lazy row")
        self._version = version
        self._lazy = lazy
        self.tokens = tokens
        self.keyword = keyword
        self.vector = vector
        self.cosine = cosine

    @property
    def version(self) -> RecordVersion:
        if self._version is None:
            assert self._lazy is not None
            self._version = self._lazy.load()
        return self._version

    @property
    def record_id(self) -> str:
        return self._lazy.record_id if self._lazy is not None else self.version.record_id

    @property
    def confidence(self) -> float:
        return self._lazy.confidence if self._lazy is not None else self.version.confidence

    @property
    def last_seen_micros(self) -> int:
        """The last confirmation as microseconds since the epoch (``epoch_micros``)."""
        if self._lazy is not None:
            return self._lazy.last_seen_micros
        return epoch_micros(self.version.last_seen_at)

    @property
    def content_digest(self) -> str:
        if self._lazy is not None:
            return self._lazy.content_digest
        return self.version.content_digest

    @property
    def trusted(self) -> bool:
        if self._lazy is not None:
            return self._lazy.trusted
        return self.version.trust is Trust.TRUSTED

    def could_name(self, query_tokens: frozenset[str]) -> bool:
        """False only when no entity of the record can be named by ``query_tokens``: a lazy
        row's tokens are its searchable text's, which holds every entity's tokens, so a row
        sharing none of the query's tokens names none (its version need not be parsed)."""
        return self._lazy is None or not query_tokens.isdisjoint(self.tokens)

    def with_version(self, version: RecordVersion) -> Candidate:
        """The same candidate for ``version`` in place of its own (a read-time view of it)."""
        return Candidate(
            version,
            tokens=self.tokens,
            keyword=self.keyword,
            vector=self.vector,
            cosine=self.cosine,
        )


@dataclass(frozen=True, slots=True)
class CandidatePool:
    """Every candidate of one recall, in record-id order, and how many were re-embedded."""

    candidates: tuple[Candidate, ...]
    reembedded: int
    embedded: bool


def searchable_text(version: RecordVersion) -> str:
    """What keywords are matched against: the content plus curated keywords, entities, tags."""
    return " ".join((version.content, *version.keywords, *version.entities, *version.tags))


def live_heads(
    scope: Scope, query: RecallQuery, records: RecordStore, where: RecordFilter | None = None
) -> list[RecordVersion]:
    """Every active head (as of ``query.as_of``) under the query's filters and ``where``, all
    pages read.

    Rows the store returns outside the scope or not active are discarded here as well, so a
    faulty backend cannot leak them into a recall.
    """
    heads: list[RecordVersion] = []
    cursor: str | None = None
    while True:
        page = records.list_records(
            scope,
            namespace_prefix=query.namespace_prefix,
            as_of=query.as_of,
            limit=MAX_PAGE_SIZE,
            cursor=cursor,
        )
        mine = in_scope(page.items, scope, where="recall")
        heads.extend(
            v for v in mine if v.live and _wanted(v, query) and (where is None or where(v))
        )
        cursor = page.next_cursor
        if cursor is None:
            return heads


def _wanted(version: RecordVersion, query: RecallQuery) -> bool:
    return query.strategy is None or version.strategy == query.strategy


def row_frequency(rows: Sequence[Sequence[str]]) -> Callable[[str], int]:
    """How many of ``rows`` (token sequences) hold a term: the document frequency the subject
    rewrite reads (``cairn.recall.subject``)."""
    return lambda term: sum(1 for row in rows if term in row)


def gather(
    scope: Scope,
    query: RecallQuery,
    *,
    records: RecordStore,
    embedder: Embedder | None,
    policy: RecallPolicy,
    where: RecordFilter | None = None,
) -> CandidatePool:
    """Read the scope's live heads (those ``where`` accepts) and score each one (BM25 always;
    cosine when possible)."""
    heads = live_heads(scope, query, records, where)
    tokens = [tuple(tokenize(searchable_text(v))) for v in heads]
    keyword = bm25_scores(tokenize(query.text), tokens, k1=policy.bm25_k1, b=policy.bm25_b)
    if only_the_subject_matched(
        query.text, row_frequency(tokens), len(heads), policy.subject_share
    ):
        keyword = [0.0] * len(heads)
    if embedder is None or not heads:
        pool = tuple(
            Candidate(version=head, tokens=tokens[i], keyword=keyword[i])
            for i, head in enumerate(heads)
        )
        return CandidatePool(candidates=pool, reembedded=0, embedded=embedder is not None)
    vectors = _stored_vectors(scope, heads, records, embedder)
    missing = sorted(
        (i for i in range(len(heads)) if i not in vectors),
        key=lambda i: (-keyword[i], heads[i].record_id),
    )[: policy.max_reembed]
    embedded = embedding_text(query.text, row_frequency(tokens), len(heads), policy.subject_share)
    fresh = embedder.embed([embedded, *(heads[i].content for i in missing)])
    vectors.update(zip(missing, fresh[1:], strict=True))
    positions = sorted(vectors)
    matrix = unit_rows(np.stack([vectors[i] for i in positions])) if positions else None
    cosines = row_cosines(matrix, unit(fresh[0])) if matrix is not None else np.zeros(0, np.float32)
    row = {position: j for j, position in enumerate(positions)}
    candidates = tuple(
        Candidate(
            version=head,
            tokens=tokens[i],
            keyword=keyword[i],
            vector=matrix[row[i]] if matrix is not None and i in row else None,
            cosine=float(cosines[row[i]]) if i in row else None,
        )
        for i, head in enumerate(heads)
    )
    return CandidatePool(candidates=candidates, reembedded=len(missing), embedded=True)


def _stored_vectors(
    scope: Scope, heads: Sequence[RecordVersion], records: RecordStore, embedder: Embedder
) -> dict[int, FloatVector]:
    """Stored vectors of ``heads`` in the embedder's space, by position; wrong widths skipped."""
    identity = embedder.identity
    found: dict[int, FloatVector] = {}
    for start, chunk in _chunks(heads, MAX_PAGE_SIZE):
        refs = [VersionRef(record_id=v.record_id, version=v.version) for v in chunk]
        stored = records.vectors(scope, refs, identity)
        for offset, ref in enumerate(refs):
            values = stored.get(ref)
            if values is not None and np.size(values) == identity.dims:
                found[start + offset] = np.asarray(values, dtype=np.float32).reshape(-1)
    return found


def _chunks(
    items: Sequence[RecordVersion], size: int
) -> Iterator[tuple[int, Sequence[RecordVersion]]]:
    for start in range(0, len(items), size):
        yield start, items[start : start + size]
