"""What formation reads: one namespace's records, and each candidate's nearest live ones.

Formation looks only inside the namespace a candidate is filed under: a fact is never merged into
a preference, nor one session's summary into another's. Similarity is the cosine of vectors in
the embedder's space when both sides have one (stored vectors first; up to ``max_reembed`` heads
without one are embedded on the fly and not stored), else the Jaccard similarity of recall's
keyword tokens. A head with the candidate's exact content is always a neighbour.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from cairn.changes import NewRecord
from cairn.extract.extraction_policy import ExtractionPolicy
from cairn.memories import StrategyKind
from cairn.models import RecordVersion, Scope, VersionRef, content_digest
from cairn.ports import MAX_PAGE_SIZE, Embedder, RecordStore
from cairn.recall.cosines import unit_rows
from cairn.recall.keywords import jaccard, tokenize
from cairn.scope_guard import in_scope

# Sorts an exact repeat before any cosine or Jaccard score (both are at most 1).
_EXACT = 2.0


@dataclass(frozen=True, slots=True)
class Neighbour:
    """A live record near a candidate, and their cosine when both have vectors in one space."""

    version: RecordVersion
    cosine: float | None = None


@dataclass(frozen=True, slots=True)
class NamespaceState:
    """Every head filed exactly under one namespace of a scope, live or not (never erased)."""

    namespace: str
    heads: tuple[RecordVersion, ...]

    @property
    def live(self) -> tuple[RecordVersion, ...]:
        return tuple(v for v in self.heads if v.live)

    def citing(self, rollout_id: str) -> tuple[RecordVersion, ...]:
        """Heads with a source naming ``rollout_id``: what that rollout already wrote here."""
        return tuple(v for v in self.heads if any(s.rollout_id == rollout_id for s in v.sources))

    def latest_summary(self) -> RecordVersion | None:
        """The most recently confirmed live summary, if the namespace holds one."""
        summaries = [v for v in self.live if v.strategy == StrategyKind.SUMMARY.value]
        return max(summaries, key=lambda v: (v.last_seen_at, v.record_id), default=None)


def read_namespace(scope: Scope, namespace: str, records: RecordStore) -> NamespaceState:
    """Every head under exactly ``namespace`` (its sub-namespaces left out), all pages read."""
    heads: list[RecordVersion] = []
    cursor: str | None = None
    while True:
        page = records.list_records(
            scope,
            namespace_prefix=namespace,
            include_inactive=True,
            limit=MAX_PAGE_SIZE,
            cursor=cursor,
        )
        mine = in_scope(page.items, scope, where="formation")
        heads.extend(v for v in mine if v.namespace == namespace)
        cursor = page.next_cursor
        if cursor is None:
            return NamespaceState(namespace=namespace, heads=tuple(heads))


def nearest(
    candidates: Sequence[NewRecord],
    live: Sequence[RecordVersion],
    *,
    scope: Scope,
    records: RecordStore,
    embedder: Embedder | None,
    policy: ExtractionPolicy,
) -> list[list[Neighbour]]:
    """Each candidate's related live records, most similar first, at most ``max_neighbours``."""
    if not live or not candidates:
        return [[] for _ in candidates]
    live_tokens = [set(tokenize(v.content)) for v in live]
    candidate_tokens = [set(tokenize(c.content)) for c in candidates]
    cosines = _cosines(
        candidates, live, candidate_tokens, live_tokens, scope, records, embedder, policy
    )
    found: list[list[Neighbour]] = []
    for i, candidate in enumerate(candidates):
        digest = content_digest(candidate.content)
        scored: list[tuple[float, str, Neighbour]] = []
        for j, head in enumerate(live):
            cosine = None if cosines is None or np.isnan(cosines[i, j]) else float(cosines[i, j])
            if head.content_digest == digest:
                score = _EXACT
            elif cosine is not None:
                score = cosine if cosine >= policy.related_cosine else -1.0
            else:
                similarity = jaccard(tuple(candidate_tokens[i]), tuple(live_tokens[j]))
                score = similarity if similarity >= policy.related_jaccard else -1.0
            if score >= 0.0:
                scored.append((score, head.record_id, Neighbour(version=head, cosine=cosine)))
        scored.sort(key=lambda item: (-item[0], item[1]))
        found.append([neighbour for _, _, neighbour in scored[: policy.max_neighbours]])
    return found


def _cosines(
    candidates: Sequence[NewRecord],
    live: Sequence[RecordVersion],
    candidate_tokens: Sequence[set[str]],
    live_tokens: Sequence[set[str]],
    scope: Scope,
    records: RecordStore,
    embedder: Embedder | None,
    policy: ExtractionPolicy,
) -> npt.NDArray[np.float32] | None:
    """Cosines (candidates x live heads); NaN where a head has no vector in the space."""
    if embedder is None:
        return None
    identity = embedder.identity
    mine = [
        c.vector.values if c.vector and c.vector.embedder == identity else None for c in candidates
    ]
    if any(values is None for values in mine):
        fresh = embedder.embed([c.content for c in candidates])
        mine = [tuple(row) for row in fresh]
    left = unit_rows(np.asarray(mine, dtype=np.float32))
    stored = _stored_vectors(scope, live, records, embedder)
    missing = sorted(
        (j for j in range(len(live)) if j not in stored),
        key=lambda j: -max(len(live_tokens[j] & t) for t in candidate_tokens),
    )[: policy.max_reembed]
    if missing:
        stored.update(zip(missing, embedder.embed([live[j].content for j in missing]), strict=True))
    right = np.full((len(live), identity.dims), np.nan, dtype=np.float32)
    for j, values in stored.items():
        right[j] = values
    known = ~np.isnan(right[:, 0])
    right[known] = unit_rows(right[known])
    return left @ right.T


def _stored_vectors(
    scope: Scope, live: Sequence[RecordVersion], records: RecordStore, embedder: Embedder
) -> dict[int, npt.NDArray[np.float32]]:
    identity = embedder.identity
    found: dict[int, npt.NDArray[np.float32]] = {}
    for start in range(0, len(live), MAX_PAGE_SIZE):
        chunk = live[start : start + MAX_PAGE_SIZE]
        refs = [VersionRef(record_id=v.record_id, version=v.version) for v in chunk]
        vectors = records.vectors(scope, refs, identity)
        for offset, ref in enumerate(refs):
            values = vectors.get(ref)
            if values is not None and np.size(values) == identity.dims:
                found[start + offset] = np.asarray(values, dtype=np.float32).reshape(-1)
    return found
