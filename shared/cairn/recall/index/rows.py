"""A scope's live heads as index rows: one bulk read (or one stream) where the store offers
it, else pages."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import cast

from cairn.models import EmbedderId, RecordVersion, Scope
from cairn.ports import (
    MAX_PAGE_SIZE,
    BuildProgress,
    IndexRow,
    IndexRowReader,
    IndexRowStream,
    RecordStore,
)
from cairn.recall.index.snapshot import row_of
from cairn.scope_guard import in_scope


def bulk_reads(records: object) -> bool:
    """Whether the store's own class reads index rows in bulk: a wrapper that forwards other
    calls (one that changes ``list_records``) is read through its ``list_records``."""
    return callable(getattr(type(records), "index_rows", None))


def read_rows(
    records: RecordStore,
    scope: Scope,
    embedder: EmbedderId | None,
    *,
    namespace_prefix: str | None = None,
    as_of: datetime | None = None,
    bulk: bool = False,
    progress: BuildProgress | None = None,
) -> list[IndexRow]:
    """The rows of ``scope``'s live heads (as of ``as_of``, under the prefix), record-id order;
    with ``bulk`` (``bulk_reads(records)``), an unfiltered read is one ``index_rows`` call, which
    reports to ``progress`` as it reads."""
    if bulk and as_of is None and namespace_prefix is None:
        return cast(IndexRowReader, records).index_rows(scope, embedder, progress)
    heads: list[RecordVersion] = []
    cursor: str | None = None
    while True:
        page = records.list_records(
            scope,
            namespace_prefix=namespace_prefix,
            as_of=as_of,
            limit=MAX_PAGE_SIZE,
            cursor=cursor,
        )
        heads.extend(v for v in in_scope(page.items, scope, where="recall") if v.live)
        cursor = page.next_cursor
        if cursor is None:
            break
    stored = records.vectors(scope, [v.ref for v in heads], embedder) if embedder and heads else {}
    return [row_of(v, stored.get(v.ref)) for v in heads]


@contextmanager
def row_stream(
    records: RecordStore, scope: Scope, embedder: EmbedderId | None, *, bulk: bool
) -> Iterator[tuple[int, Iterator[IndexRow]]]:
    """The scope's live heads as a count and a stream of rows: from the store's own stream
    (``IndexRowStream``, read one row at a time) when its class has one, else ``read_rows``."""
    # ``bulk`` already says the store's own class reads rows itself (``bulk_reads``, asked of
    # the store, not of the proxy an index may hold), so the instance is asked here.
    if bulk and callable(getattr(records, "index_row_stream", None)):
        with cast(IndexRowStream, records).index_row_stream(scope, embedder) as stream:
            yield stream
        return
    rows = read_rows(records, scope, embedder, bulk=bulk)
    yield len(rows), iter(rows)
