"""The journal of a recall over records, turns and chunks, and its replay, which never searches.

``journal_hits`` files an entry as ``cairn.recall`` files one (the query, its filters, the
embedder, the knobs, the block's sha256, the scope's chain), with ``channels`` (the kinds
searched) and ``shown``: every line of the block in order, a record by id, version and content
digest (also in ``selected``, as a records-only recall pins it), a turn by session and event
id, a chunk by session and chunk id, each of those with the sha256 of its text, and whether it
fell in a period the query named (that depends on the query, not on what is stored).

``replay`` rebuilds the block from exactly those: records through ``get_version`` (an erased
one shows as ``(erased)``, is listed in ``erased`` and the replay does not match), turns and
chunks re-read by id (both are immutable under their ids). A turn deleted or a session erased
since is left out of the block and listed in ``missing``, so the replay does not match; so is
a chunk whose id now holds other words (a session rolled up again after an erasure reuses
chunk ids). A record version or a turn whose stored text no longer has the pinned digest is a
rewritten store, and refuses the whole replay with ``ReplayMismatchError``, as recall's replay
does. A records-only entry is handed to ``cairn.recall.replay``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime

from cairn.errors import (
    ChunkNotFoundError,
    EventNotFoundError,
    RecordNotFoundError,
    ReplayMismatchError,
)
from cairn.history.axes import Kind
from cairn.history.hits import Hit, chunk_piece, hits_block, piece_hit, record_hit, turn_piece
from cairn.journal_chain import verify_from
from cairn.models import JournalEntry, RecordVersion, Scope, SelectedEntry, ShownHit, Status
from cairn.ports import Embedder, Stores
from cairn.recall.journal import block_digest, new_journal_id
from cairn.recall.query import RecallPolicy, RecallQuery
from cairn.recall.render import ERASED_TEXT
from cairn.recall.replay import Replay
from cairn.recall.replay import replay as replay_records


def text_digest(text: str) -> str:
    """sha256 hex of a turn's or chunk's text as shown (its exact UTF-8 bytes)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def journal_hits(
    scope: Scope,
    query: RecallQuery,
    kinds: frozenset[Kind],
    hits: Sequence[Hit],
    block: str,
    *,
    stores: Stores,
    embedder: Embedder | None,
    policy: RecallPolicy,
    now: datetime,
) -> str:
    """File the journal entry of a recall that showed ``hits`` as ``block``; its id."""
    shown: list[ShownHit] = []
    selected: list[SelectedEntry] = []
    for hit in hits:
        if hit.record is not None:
            version = hit.record
            selected.append(
                SelectedEntry(
                    record_id=version.record_id,
                    version=version.version,
                    content_digest=version.content_digest,
                    score=hit.score,
                )
            )
            pin = ShownHit(
                kind="records",
                ref=version.record_id,
                version=version.version,
                digest=version.content_digest,
                in_period=hit.in_period,
                score=hit.score,
            )
        else:
            pin = ShownHit(
                kind=hit.kind,
                ref=hit.ref,
                session_id=hit.session_id,
                digest=text_digest(hit.text),
                in_period=hit.in_period,
                score=hit.score,
            )
        shown.append(pin)
    entry = JournalEntry(
        journal_id=new_journal_id(now),
        memory_id=scope.memory_id,
        actor_id=scope.actor_id,
        created_at=now,
        query=query.text,
        filters={**query.filters(), "top_k": str(query.top_k)},
        embedder=embedder.identity if embedder is not None else None,
        policy=policy.knobs(),
        selected=tuple(selected),
        block_digest=block_digest(block),
        channels=tuple(sorted(kinds)),
        shown=tuple(shown),
    )
    stores.journal.put(entry)
    return entry.journal_id


def replay(scope: Scope, journal_id: str, *, stores: Stores) -> Replay:
    """Re-render journal entry ``journal_id`` of ``scope``, whichever recall filed it, without
    searching; errors as ``cairn.recall.replay.replay``."""
    entry = stores.journal.get(scope, journal_id)
    if not entry.channels:
        return replay_records(scope, journal_id, stores=stores)
    verify_from(stores.journal, entry)
    hits: list[Hit] = []
    versions: list[RecordVersion] = []
    missing: list[str] = []
    forged: list[str] = []
    for pin in entry.shown:
        hit = _rebuilt(scope, pin, stores, versions, forged)
        if hit is None:
            missing.append(pin.ref)
        else:
            hits.append(hit)
    if forged:
        raise ReplayMismatchError(journal_id, forged, "their text is not what the journal pinned")
    block = hits_block(tuple(hits))
    digest = block_digest(block)
    return Replay(
        journal=entry,
        versions=tuple(versions),
        block=block,
        block_digest=digest,
        matches=digest == entry.block_digest and not missing,
        erased=tuple(v.record_id for v in versions if v.status is Status.ERASED),
        missing=tuple(missing),
    )


def _rebuilt(
    scope: Scope,
    pin: ShownHit,
    stores: Stores,
    versions: list[RecordVersion],
    forged: list[str],
) -> Hit | None:
    """The pinned line's hit as it was shown, or ``None`` when what it showed is gone."""
    if pin.kind == "records":
        try:
            version = stores.records.get_version(scope, pin.ref, pin.version or 1)
        except RecordNotFoundError:
            return None
        versions.append(version)
        if version.content_digest != pin.digest:
            forged.append(pin.ref)
        erased = version.status is Status.ERASED
        text = ERASED_TEXT if erased else version.content
        return record_hit(version, pin.score, 0.0, pin.in_period, text=text)
    session_id = pin.session_id or ""
    if pin.kind == "turns":
        try:
            event = stores.events.get_event(scope, session_id, pin.ref)
        except EventNotFoundError:
            return None
        piece = turn_piece(event, session_id)
        if piece is None or text_digest(piece.passage.text) != pin.digest:
            forged.append(pin.ref)
            return None
    else:
        if stores.chunks is None:
            return None
        try:
            chunk = stores.chunks.get_chunk(scope, session_id, pin.ref)
        except ChunkNotFoundError:
            return None
        piece = chunk_piece(chunk, session_id)
        if text_digest(piece.passage.text) != pin.digest:
            return None  # the id now holds another roll-up's words
    return piece_hit(piece, pin.score, 0.0, pin.in_period)
