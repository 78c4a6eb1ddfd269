"""``cairn import --format cairn`` into the scope the export came from: a lossless restore.

Each line of a ``cairn.export/1`` file is one record's whole history. Into its own scope it is
written back exactly as it was, version by version (``RecordStore.restore``): ids, numbers,
sources, trust, status, links, times, erased tombstones. The whole file is read and checked
first (``cairn.restoring.check_history``), and so is the store: a record id it holds with the
same history is skipped (a second import, or a retry after a crash, changes nothing); one it
holds with another history refuses the whole import, naming the record, before anything is
written. Each record is then one transaction, so a crash leaves whole records only, and the
next import skips them. The local embedder re-derives the vectors (an export has none) for the
versions that name it, and each record is placed in the memory's record directory, so the API
(``cairn serve``) finds it by id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cairn.cli.errors import UsageError

if TYPE_CHECKING:
    from cairn.changes import Vector
    from cairn.models import RecordVersion, Scope
    from cairn.ports import Embedder, Stores


@dataclass(frozen=True)
class Restored:
    """How many records an import restored, and how many the store held already."""

    restored: int
    held: int


def check_histories(histories: Sequence[tuple[RecordVersion, ...]], scope: Scope) -> None:
    """``UsageError`` naming the record and what is wrong if any history cannot be restored."""
    from cairn.errors import InvalidInputError
    from cairn.restoring import check_history

    seen: set[str] = set()
    for history in histories:
        try:
            check_history(scope, history)
        except InvalidInputError as exc:
            raise UsageError(f"{exc.message}; nothing was imported") from exc
        if history[0].record_id in seen:
            raise UsageError(
                f"record {history[0].record_id!r} is in the file twice; nothing was imported"
            )
        seen.add(history[0].record_id)


def restore_histories(
    stores: Stores, scope: Scope, histories: Sequence[tuple[RecordVersion, ...]], embedder: Embedder
) -> Restored:
    """Restore every history the store does not hold (see the module docstring)."""
    from cairn.cli.progress import counted
    from cairn.errors import RecordNotFoundError
    from cairn.ports import RecordPlacement

    fresh = []
    for history in counted(histories, label="checking"):
        try:
            held = stores.records.history(scope, history[0].record_id)
        except RecordNotFoundError:
            fresh.append(history)
            continue
        if held != history:
            raise UsageError(
                f"record {history[0].record_id!r} is held here with another history; nothing "
                "was imported: restore into a store that does not hold it, or leave it out"
            )
    vectors = _vectors(embedder, fresh)
    for history in counted(fresh, label="restoring"):
        stores.records.restore(scope, history, vectors=vectors)
        if stores.directory is not None:  # so the API (cairn serve) finds it by id
            head = history[-1]
            placement = RecordPlacement(
                record_id=head.record_id, actor_id=scope.actor_id, namespace=head.namespace
            )
            stores.directory.place(scope.memory_id, [placement])
    return Restored(restored=len(fresh), held=len(histories) - len(fresh))


def _vectors(
    embedder: Embedder, histories: Sequence[tuple[RecordVersion, ...]]
) -> dict[str, Vector]:
    """A vector for the words of every version that names ``embedder``, by content digest."""
    from cairn.cli.progress import embed_texts
    from cairn.models import Status

    texts = {
        v.content_digest: v.content
        for history in histories
        for v in history
        if v.embedding == embedder.identity and v.status is not Status.ERASED
    }
    vectors = embed_texts(embedder, list(texts.values()), unit="text")
    return dict(zip(texts, vectors, strict=True))
