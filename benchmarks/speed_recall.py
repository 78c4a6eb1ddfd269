"""Recall latency as one scope grows: 1k, 10k, 100k records on the embedded SQLite store.

The scope is filled once, in record-count order, and measured at each size on the way up. Each
fact is a user-sourced record in ``/facts/<actor>/``, with a session of 20 facts told a minute
apart (so context expansion has threads to walk) and its vector stored. A recall is
``cairn.recall.recall`` as shipped (default policy and budget, journal written), timed three
ways: end to end with the query embedded by the ONNX model; with the query's vector computed
beforehand (the recall engine alone); and the query embedding alone. After the floor, the
floor's two steps are timed one after the other, and a query-embedded recall split into them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np

from benchmarks import synthetic
from benchmarks.timing import Timing, time_each
from benchmarks.vectors import embed_all
from cairn.changes import MAX_CHANGES_PER_APPLY, Create, NewRecord, Vector
from cairn.clock import FixedClock
from cairn.models import EmbedderId, Scope, Source, SourceKind, VersionRef
from cairn.ports import MAX_PAGE_SIZE, Embedder, FloatMatrix, FloatVector, Stores
from cairn.recall import DEFAULT_POLICY, RecallQuery, recall
from cairn.recall.budget import clamp
from cairn.recall.candidates import gather, live_heads, searchable_text
from cairn.recall.cosines import row_cosines, unit, unit_rows
from cairn.recall.dedup import deduplicate
from cairn.recall.keywords import bm25_scores, tokenize
from cairn.recall.ordering import order
from cairn.recall.render import render_block

SCOPE = Scope(memory_id="bench-speed", actor_id="user-1")
SESSION_FACTS = 20
ELSEWHERE_BYTES = 64 * 2**20  # twice the last-level cache of the machines measured here
STARTED = datetime(2025, 6, 1, tzinfo=UTC)
NOW = datetime(2026, 6, 1, tzinfo=UTC)


class PrecomputedEmbedder:
    """The ONNX embedder's identity with the queries' vectors computed in one batch beforehand,
    so a timed recall spends nothing on embedding."""

    def __init__(self, identity: EmbedderId, texts: Sequence[str], vectors: FloatMatrix) -> None:
        self._identity = identity
        self._vectors = {text: vectors[i] for i, text in enumerate(texts)}

    @property
    def identity(self) -> EmbedderId:
        return self._identity

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        return np.stack([self._vectors[text] for text in texts]).astype(np.float32)


def fill(
    stores: Stores,
    identity: EmbedderId,
    facts: Sequence[str],
    vectors: FloatMatrix,
    span: tuple[int, int],
) -> None:
    """Write facts ``span[0]``..``span[1] - 1`` as records, 16 changes per atomic apply."""
    start, end = span
    for first in range(start, end, MAX_CHANGES_PER_APPLY):
        changes = []
        for i in range(first, min(end, first + MAX_CHANGES_PER_APPLY)):
            source = Source(kind=SourceKind.USER, session_id=f"s-{i // SESSION_FACTS}")
            record = NewRecord(
                namespace=f"/facts/{SCOPE.actor_id}/",
                content=facts[i],
                sources=(source,),
                seen_at=STARTED + timedelta(minutes=i),
                vector=Vector(embedder=identity, values=tuple(vectors[i].tolist())),
            )
            changes.append(Create(record=record))
        stores.records.apply(SCOPE, changes)


@dataclass(frozen=True)
class SizeResult:
    """Recall timings at one record count, and the floor measured beside them.

    The floor is what no recall can go under on this machine: embed the query, then one pass
    over the scope's unit matrix, timed in the same run: the faster (by median) of ``M @ q``
    (numpy as installed: BLAS, two threads here, slow when the cores are contended) and the
    row-by-row pass recall itself makes (``row_cosines``: one thread, or chunks shared with a
    helper thread from ``SPLIT_ROWS`` rows).

    The rest shows what timing each step on its own leaves out, timed after the floor.
    ``in_sequence`` is the floor's two steps as a recall runs them, a question embedded and its
    vector passed over the matrix straight after, in a loop (the faster way by median, as for
    ``one_pass``). ``embedding_after_recall`` and ``engine_after_embedding`` split a
    query-embedded recall the same way: the question embedded straight after the last recall,
    then recall answering it from the vector just made. Each step then starts with the caches
    the other left (the model's weights and the scope's matrix do not both stay in the
    last-level cache). ``engine_after_elsewhere`` is the control: the engine straight after
    reading ``ELSEWHERE_BYTES`` of memory that has nothing to do with recall. These are shown
    beside the floor, not in its place: the target is the ratio to ``floor``.
    """

    records: int
    end_to_end: Timing
    engine_only: Timing
    embedding: Timing
    one_pass: Timing
    in_sequence: Timing
    embedding_after_recall: Timing
    engine_after_embedding: Timing
    engine_after_elsewhere: Timing
    entries: float

    @property
    def floor(self) -> float:
        return self.embedding.median + self.one_pass.median

    @property
    def ratio(self) -> float:
        """Warm recall (query embedded) over the floor: 1.0 would be the hardware."""
        return self.end_to_end.median / self.floor


def time_recalls(
    stores: Stores,
    records: int,
    questions: Sequence[str],
    onnx: Embedder,
    precomputed: PrecomputedEmbedder,
    runs: int,
    vectors: FloatMatrix,
) -> SizeResult:
    """``runs`` recalls each way at the scope's current size, cycling through ``questions``;
    ``vectors`` are the scope's (its first ``records`` rows), for the floor's one pass."""
    clock = FixedClock(NOW)
    shown: list[int] = []

    def ask(embedder: Embedder) -> Callable[[int], None]:
        def run(i: int) -> None:
            query = RecallQuery(text=questions[i % len(questions)])
            result = recall(SCOPE, query, stores=stores, embedder=embedder, clock=clock)
            shown.append(len(result.entries))

        return run

    ask(onnx)(0)  # warm: first-call costs (ONNX session, SQLite page cache) are not recall's
    # Interleaved, so both ways see the same machine load and the same journal size.
    embedded: list[float] = []
    given: list[float] = []
    with_onnx, with_vectors = ask(onnx), ask(precomputed)
    for i in range(runs):
        for run, samples in ((with_onnx, embedded), (with_vectors, given)):
            started = time.perf_counter()
            run(i)
            samples.append((time.perf_counter() - started) * 1000)
    end_to_end, engine_only = Timing(tuple(embedded)), Timing(tuple(given))
    embedding = time_each(lambda i: onnx.embed([questions[i % len(questions)]]), max(runs, 20))
    matrix = unit_rows(vectors[:records])
    query = precomputed.embed(questions[:1])[0]
    blas = time_each(lambda _: matrix @ query, max(runs, 20))
    rows = time_each(lambda _: row_cosines(matrix, query), max(runs, 20))
    one_pass = min(blas, rows, key=lambda timing: timing.median)

    def embedded(i: int) -> FloatVector:
        return onnx.embed([questions[i % len(questions)]])[0]

    in_sequence = min(
        time_each(lambda i: matrix @ embedded(i), max(runs, 20)),
        time_each(lambda i: row_cosines(matrix, embedded(i)), max(runs, 20)),
        key=lambda timing: timing.median,
    )

    def answer(question: str, embedder: Embedder) -> None:  # not counted in ``shown``
        recall(SCOPE, RecallQuery(text=question), stores=stores, embedder=embedder, clock=clock)

    after_recall: list[float] = []
    after_embedding: list[float] = []
    answer(questions[0], precomputed)  # untimed: the first embedding below follows a recall too
    for i in range(max(runs, 20)):
        question = questions[i % len(questions)]
        started = time.perf_counter()
        vector = onnx.embed([question])
        embedded_at = time.perf_counter()
        answer(question, PrecomputedEmbedder(onnx.identity, [question], vector))
        after_recall.append((embedded_at - started) * 1000)
        after_embedding.append((time.perf_counter() - embedded_at) * 1000)
    elsewhere = np.ones(ELSEWHERE_BYTES // 8)
    after_elsewhere: list[float] = []
    for i in range(max(runs, 20)):
        elsewhere.sum()  # reads memory no recall touches, so the caches hold none of recall's
        started = time.perf_counter()
        answer(questions[i % len(questions)], precomputed)
        after_elsewhere.append((time.perf_counter() - started) * 1000)
    return SizeResult(
        records=records,
        end_to_end=end_to_end,
        engine_only=engine_only,
        embedding=embedding,
        one_pass=one_pass,
        in_sequence=in_sequence,
        embedding_after_recall=Timing(tuple(after_recall)),
        engine_after_embedding=Timing(tuple(after_embedding)),
        engine_after_elsewhere=Timing(tuple(after_elsewhere)),
        entries=sum(shown) / len(shown),
    )


def real_and_stretched(onnx: Embedder, facts: Sequence[str], use_cache: bool) -> FloatMatrix:
    """Real vectors for the first ``REAL_VECTORS`` facts, perturbed copies for the rest."""
    real, _ = embed_all(onnx, facts[: synthetic.REAL_VECTORS], use_cache=use_cache)
    return synthetic.stretch(real, len(facts))


@dataclass(frozen=True)
class Breakdown:
    """Where one recall's time goes, in milliseconds, at one record count."""

    records: int
    list_heads: float
    fetch_vectors: float
    score: float
    order: float
    select_and_render: float


def break_down(stores: Stores, records: int, question: str, embedder: Embedder) -> Breakdown:
    """One recall, step by step: reading the heads, fetching their vectors, scoring them as
    ``gather`` does (keyword tokens, BM25, unit rows and cosines), ``order``, then dedup, clamp
    and render."""
    policy = DEFAULT_POLICY
    query = RecallQuery(text=question)
    began = time.perf_counter()
    heads = live_heads(SCOPE, query, stores.records)
    listed = time.perf_counter()
    refs = [v.ref for v in heads]
    stored: dict[VersionRef, FloatVector] = {}
    for start in range(0, len(refs), MAX_PAGE_SIZE):
        chunk = refs[start : start + MAX_PAGE_SIZE]
        stored.update(stores.records.vectors(SCOPE, chunk, embedder.identity))
    fetched = time.perf_counter()
    tokens = [tokenize(searchable_text(v)) for v in heads]
    bm25_scores(tokenize(question), tokens, k1=policy.bm25_k1, b=policy.bm25_b)
    matrix = unit_rows(np.stack([stored[r] for r in refs if r in stored]))
    matrix @ unit(embedder.embed([question])[0])
    scored = time.perf_counter()
    pool = gather(SCOPE, query, records=stores.records, embedder=embedder, policy=policy)
    gathered = time.perf_counter()
    ranked = order(pool, question, policy, NOW).ranked
    ordered = time.perf_counter()
    kept = deduplicate(ranked, policy, limit=query.top_k).kept
    render_block(clamp(kept, policy, query.top_k).entries)
    done = time.perf_counter()
    return Breakdown(
        records=records,
        list_heads=(listed - began) * 1000,
        fetch_vectors=(fetched - listed) * 1000,
        score=(scored - fetched) * 1000,
        order=(ordered - gathered) * 1000,
        select_and_render=(done - ordered) * 1000,
    )
