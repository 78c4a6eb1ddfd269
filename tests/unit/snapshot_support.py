"""What the persisted recall index snapshot tests share: one scope of facts with a distinctive
private string, a recall that skips the journal, the scan it must equal, and the bytes of the
store's folder (to prove erased content is in no file)."""

from __future__ import annotations

from pathlib import Path

from cairn.changes import Create, NewRecord, Vector
from cairn.clock import FixedClock
from cairn.models import Scope, Source, SourceKind
from cairn.ports import Stores
from cairn.recall import RecallQuery, Recollection, recall
from cairn.recall.index import EmbeddedRecallIndex, index_of
from cairn.recall.index.persisted import PersistedSnapshots
from cairn.recall.scan import ScanningRecallIndex
from cairn.store.sqlite.backend import snapshot_folder_of
from cairn.testing import HashingEmbedder

SCOPE = Scope(memory_id="m1", actor_id="a1")
EMBEDDER = HashingEmbedder(dims=32)
PRIVATE = "Quixotic-Aubergine-Diagnosis-8841"  # distinctive: in no file by accident
QUERY = RecallQuery(text="what about the aubergine diagnosis tea", top_k=5)


def fact(content: str, session: str = "s1", namespace: str = "/facts/a1/") -> NewRecord:
    return NewRecord(
        namespace=namespace,
        content=content,
        sources=(Source(kind=SourceKind.USER, session_id=session),),
        vector=Vector(embedder=EMBEDDER.identity, values=tuple(EMBEDDER.embed([content])[0])),
    )


def write(
    stores: Stores, contents: list[str], *, scope: Scope = SCOPE, session: str = "s1"
) -> list[str]:
    written = stores.records.apply(scope, [Create(record=fact(c, session)) for c in contents])
    return [v.record_id for v in written]


def asked(stores: Stores, clock: FixedClock, index: object | None = None) -> Recollection:
    return recall(
        SCOPE,
        QUERY,
        stores=stores,
        embedder=EMBEDDER,
        clock=clock,
        journal=False,
        index=index,  # type: ignore[arg-type]
    )


def seen(found: Recollection) -> tuple[object, ...]:
    return found.block, tuple((e.version.ref, e.score) for e in found.entries), found.counts


def scanned(stores: Stores, clock: FixedClock) -> tuple[object, ...]:
    return seen(asked(stores, clock, ScanningRecallIndex(stores.records)))


def persisted(stores: Stores) -> PersistedSnapshots:
    index = index_of(stores)
    assert isinstance(index, EmbeddedRecallIndex)
    assert index.persisted is not None
    return index.persisted


def counts(stores: Stores) -> tuple[int, int, int]:
    """(files mapped, files published, recalls a delta answered) of the store's index."""
    index = index_of(stores)
    assert isinstance(index, EmbeddedRecallIndex)
    return persisted(stores).mapped, persisted(stores).published, index.caught_up


def folder_bytes(store: Path) -> bytes:
    """Every byte of every file in the store's folder (database, WAL, snapshots)."""
    return b"".join(p.read_bytes() for p in sorted(store.parent.rglob("*")) if p.is_file())


def the_file(store: Path) -> Path:
    (path,) = snapshot_folder_of(store).glob("*.snapshot")
    return path
