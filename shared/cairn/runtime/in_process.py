"""``InProcessSessionStore``: a session's memory in this process, over ``cairn.ports.Stores``.

Recall runs here (``cairn.recall``), against whichever backend the stores are: the embedded
SQLite store, or DynamoDB called directly with the caller's IAM credentials. Writes go through
``RecordStore.apply``, one atomic change each, and obey authority (``cairn.authority``): the
model's tools never edit or retract a record of user authority (``AuthorityError``, nothing
written), and the model re-filing a lesson that exists is not a confirmation (its seen_count
stays; only independent evidence confirms).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from cairn.authority import may_change
from cairn.changes import Create, NewRecord, RecordPatch, Retract, Revise, Vector
from cairn.errors import AuthorityError
from cairn.history.axes import kinds_of
from cairn.history.search import recall_both
from cairn.models import (
    EventInput,
    JournalEntry,
    RecordVersion,
    Scope,
    SelectedEntry,
    Source,
    SourceKind,
    content_digest,
)
from cairn.ports import MAX_APPEND_BATCH, MAX_PAGE_SIZE, Clock, Embedder, Stores
from cairn.quarantine import QUARANTINED_FILTER, Quarantine, is_quarantined, quarantined_view
from cairn.recall import RecalledEntry, RecallPolicy, RecallQuery, recall
from cairn.recall.budget import block_entry
from cairn.recall.journal import block_digest, new_journal_id
from cairn.recall.render import BlockEntry, entry_date, is_contested, render_block
from cairn.runtime.session_store import (
    Recalled,
    RecalledHistory,
    RecalledHit,
    RecalledItem,
    Written,
)

Appender = Callable[[Scope, EventInput], object]
"""Stores one event: ``EventStore.append``, or an extraction pipeline's ``append`` that also
counts it toward the memory's triggers (``cairn.local.system.EmbeddedExtraction.append``)."""


BatchAppender = Callable[[Scope, Sequence[EventInput], Sequence[str | None]], object]
"""Stores a batch of events in one transaction, each under its idempotency key, counting them
as ``Appender`` does (``cairn.local.system.EmbeddedExtraction.append_batch``)."""


Releaser = Callable[[Scope, str], object]
"""Hands a closed session's turns not yet extracted to extraction now, whatever the triggers:
``(scope, session id)`` (``cairn.local.system.EmbeddedExtraction.release_session``)."""


class InProcessSessionStore:
    """The ``SessionStore`` port over a ``Stores`` bundle; the caller owns (and closes) it.

    Turns go through ``appender`` when given (so extraction sees them; a batch at once through
    ``batch``), else straight to the store, a batch in one transaction where the store keeps
    rollouts (``RolloutStore.append_counted_batch`` with no policy). A batch is written under
    its turns' tokens as idempotency keys, so a batch written again stores only what had not
    landed.
    """

    def __init__(
        self,
        stores: Stores,
        *,
        embedder: Embedder | None,
        clock: Clock,
        appender: Appender | None = None,
        batch: BatchAppender | None = None,
    ) -> None:
        self._stores = stores
        self._embedder = embedder
        self._clock = clock
        self._append = appender or stores.events.append
        self._batch = batch
        if batch is None and appender is None and stores.rollouts is not None:
            rollouts = stores.rollouts

            def uncounted(
                scope: Scope, events: Sequence[EventInput], keys: Sequence[str | None]
            ) -> object:
                return rollouts.append_counted_batch(
                    scope, events, policy=None, idempotency_keys=keys
                )

            self._batch = uncounted

    @property
    def can_curate(self) -> bool:
        return True

    def append(self, scope: Scope, turn: EventInput, *, token: str) -> None:
        # EventStore.append has no idempotency key; a local append either commits or raises.
        del token
        self._append(scope, turn)

    def append_batch(self, scope: Scope, turns: Sequence[tuple[EventInput, str]]) -> None:
        if self._batch is None:
            for turn, token in turns:
                self.append(scope, turn, token=token)
            return
        for start in range(0, len(turns), MAX_APPEND_BATCH):
            chunk = turns[start : start + MAX_APPEND_BATCH]
            self._batch(scope, [turn for turn, _ in chunk], [token for _, token in chunk])

    def recall(
        self, scope: Scope, query: RecallQuery, policy: RecallPolicy, *, journal: bool
    ) -> Recalled:
        found = recall(
            scope,
            query,
            stores=self._stores,
            embedder=self._embedder,
            clock=self._clock,
            policy=policy,
            journal=journal,
        )
        items = tuple(_item(entry) for entry in found.entries)
        return Recalled(block=found.block, items=items, journal_id=found.journal_id)

    def recall_channels(
        self, scope: Scope, query: RecallQuery, policy: RecallPolicy, channels: frozenset[str]
    ) -> RecalledHistory:
        found = recall_both(
            scope,
            query,
            stores=self._stores,
            embedder=self._embedder,
            clock=self._clock,
            kinds=kinds_of(channels),
            policy=policy,
        )
        hits = tuple(
            RecalledHit(h.kind, h.ref, h.session_id, h.at.date().isoformat(), h.text, h.trust)
            for h in found.hits
        )
        return RecalledHistory(block=found.block, hits=hits, journal_id=found.journal_id)

    def journal_injection(
        self, scope: Scope, query: RecallQuery, shown: Sequence[RecalledItem], policy: RecallPolicy
    ) -> str | None:
        block = render_block([item.entry for item in shown])
        filters = {**query.filters(), "top_k": str(query.top_k), "injection": "turn"}
        return self._journal(scope, query.text, filters, shown, block, policy)

    def journal_release(
        self,
        scope: Scope,
        filters: Mapping[str, str],
        released: Sequence[RecalledItem],
        policy: RecallPolicy,
    ) -> str | None:
        # Rendered from the stored versions as replay renders them, whichever recall (the
        # block, an injection, memory_recall) showed each, so replaying the release matches.
        records = self._stores.records
        versions = [records.get_version(scope, i.record_id, i.version or 1) for i in released]
        held = [i.record_id for i in released if i.entry.quarantined]
        shown = [quarantined_view(v) if v.record_id in held else v for v in versions]
        block = render_block([block_entry(v, policy.max_entry_bytes) for v in shown])
        marked = {**filters, QUARANTINED_FILTER: ",".join(held)} if held else dict(filters)
        query = f"(release: {filters.get('release', '')})"
        return self._journal(scope, query, marked, released, block, policy)

    def _journal(
        self,
        scope: Scope,
        query: str,
        filters: dict[str, str],
        shown: Sequence[RecalledItem],
        block: str,
        policy: RecallPolicy,
    ) -> str:
        now = self._clock.now()
        entry = JournalEntry(
            journal_id=new_journal_id(now),
            memory_id=scope.memory_id,
            actor_id=scope.actor_id,
            created_at=now,
            query=query,
            filters=filters,
            embedder=self._embedder.identity if self._embedder is not None else None,
            policy=policy.knobs(),
            selected=tuple(
                SelectedEntry(
                    record_id=item.record_id,
                    version=item.version or 1,
                    content_digest=content_digest(item.content),
                    score=item.evidence or 0.0,
                )
                for item in shown
            ),
            block_digest=block_digest(block),
        )
        self._stores.journal.put(entry)
        return entry.journal_id

    def learn(self, scope: Scope, record: NewRecord) -> Written:
        repeat = self._live_repeat(scope, record)
        if repeat is not None:
            # The model filing what it can read (it may have just recalled it) is no evidence.
            return _written(repeat, confirmed=True)
        (written,) = self._stores.records.apply(scope, [Create(record=self._with_vector(record))])
        return _written(written)

    def _check_authority(self, scope: Scope, record_id: str, source: Source, action: str) -> None:
        head = self._stores.records.get(scope, record_id)
        listed = self._stores.quarantine
        quarantine = Quarantine(listed.entries(scope.memory_id)) if listed else None
        if not may_change((source,), None, head, quarantine):
            raise AuthorityError(record_id, action)

    def revise(self, scope: Scope, record_id: str, content: str, source: Source) -> Written:
        self._check_authority(scope, record_id, source, "edit")
        change = Revise(
            record_id=record_id,
            patch=RecordPatch(content=content),
            add_sources=(source,),
            vector=self._vector(content),
        )
        (written,) = self._stores.records.apply(scope, [change])
        return _written(written)

    def retract(self, scope: Scope, record_id: str, reason: str) -> Written:
        # Only the model's tools retract through a session: its authority is the model's.
        self._check_authority(scope, record_id, Source(kind=SourceKind.MODEL), "retract")
        (written,) = self._stores.records.apply(
            scope, [Retract(record_id=record_id, reason=reason)]
        )
        return _written(written)

    def _live_repeat(self, scope: Scope, record: NewRecord) -> RecordVersion | None:
        """The live record in ``record``'s namespace with the same content digest, if any."""
        digest = content_digest(record.content)
        cursor: str | None = None
        while True:
            page = self._stores.records.list_records(
                scope, namespace_prefix=record.namespace, limit=MAX_PAGE_SIZE, cursor=cursor
            )
            for version in page.items:
                if version.namespace == record.namespace and version.content_digest == digest:
                    return version
            cursor = page.next_cursor
            if cursor is None:
                return None

    def _with_vector(self, record: NewRecord) -> NewRecord:
        vector = self._vector(record.content)
        return record if vector is None else record.model_copy(update={"vector": vector})

    def _vector(self, text: str) -> Vector | None:
        if self._embedder is None:
            return None
        (row,) = self._embedder.embed([text])
        return Vector(embedder=self._embedder.identity, values=tuple(float(x) for x in row))


def _item(entry: RecalledEntry) -> RecalledItem:
    version = entry.version
    shown = BlockEntry(
        record_id=version.record_id,
        date=entry_date(version),
        confidence=version.confidence,
        trust=version.trust,
        text=entry.text,
        truncated=entry.truncated,
        contested=is_contested(version),
        quarantined=is_quarantined(version),
    )
    return RecalledItem(
        record_id=version.record_id,
        version=version.version,
        content=version.content,
        entry=shown,
        evidence=entry.cosine,
        source_events=frozenset(s.event_id for s in version.sources if s.event_id is not None),
    )


def _written(version: RecordVersion, *, confirmed: bool = False) -> Written:
    return Written(
        record_id=version.record_id,
        version=version.version,
        status=version.status,
        trust=version.trust,
        confirmed=confirmed,
    )
