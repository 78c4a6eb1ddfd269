"""The bytes of a recall index object: a scope's index rows at one generation.

Layout (little-endian): the magic ``CAIRNIX1``; a u32 header length and the header (JSON:
format, generation, embedder key and dims, row and vector counts, the rows' byte length, the
memory's quarantine list read with the rows, the scope's change-feed sequence the rows are
current to and a digest naming the change at it, ``null`` when unknown, and when the rows were
last read whole from the store, in Unix seconds); the
rows (one JSON array, a row an array of its ``IndexRow`` fields, the row's stored version JSON
last, ``-1`` or its position in the matrix before it); then the vectors, float32, one row per
vector, exactly the bytes the store holds. Rows are what ``IndexRowReader.index_rows`` returned,
so a snapshot built from decoded rows is the snapshot built from the store's (the conformance
suite checks the answers against a scan); a version is parsed only when a recall shows it.

``decode`` refuses (``CorruptIndexObjectError``) anything that is not exactly such an object,
so a truncated or foreign object is a rebuild, never an answer.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from cairn.models import EmbedderId, RecordVersion
from cairn.ports import IndexRow
from cairn.quarantine import QuarantineEntry

MAGIC = b"CAIRNIX1"
# 2: the header carries the memory's quarantine list as read with the rows (cairn.quarantine);
# a format-1 object is another format, so it is rebuilt rather than read without the list.
# 3: the header carries the change-feed sequence the rows are current to
# (``cairn.recall.index.object_patch``); a format-2 object reads with none: usable at its own
# generation, never patched.
# 4: written by code whose feed holds a ``re-embedded`` change for every vector stored; a
# format-3 object's sequence may predate a vector stored with no change, so it reads with
# none, as a format-2 object does (``object_patch``).
# 5: a record distilled from a rollout is in no thread (``cairn.ports.stored_threads``); an
# older object may hold one in a thread, so it is another format: rebuilt, never read.
FORMAT = 5
_READABLE = (FORMAT,)
_LENGTH = struct.Struct("<I")


class CorruptIndexObjectError(ValueError):
    """The bytes are not an index object this code wrote (internal: a rebuild follows)."""


@dataclass(frozen=True, slots=True)
class DecodedObject:
    """An index object's generation and rows."""

    generation: str
    rows: list[IndexRow]
    quarantine: tuple[QuarantineEntry, ...] = ()
    # Every change of the scope's feed up to this sequence is in ``rows`` (``None``: unknown).
    sequence: int | None = None
    change: str | None = None  # ``object_patch.change_digest`` of the change at ``sequence``
    whole_at: float | None = None  # when the rows were last read whole (Unix seconds)


def encode(
    rows: Sequence[IndexRow],
    generation: str,
    embedder: EmbedderId | None,
    quarantine: Sequence[QuarantineEntry] = (),
    sequence: int | None = None,
    change: str | None = None,
    whole_at: float | None = None,
) -> bytes:
    """The object of ``rows`` at ``generation``, current to feed ``sequence`` (a row without
    its stored JSON, ``data``, is parsed and dumped: slower, the same version)."""
    dims = embedder.dims if embedder is not None else 0
    with_vector = [i for i, row in enumerate(rows) if row.vector is not None and dims]
    position = {i: j for j, i in enumerate(with_vector)}
    listed = [
        [
            row.record_id,
            row.namespace,
            row.strategy,
            row.searchable,
            row.content,
            row.confidence,
            row.first_seen_at.isoformat(),
            row.last_seen_at.isoformat(),
            sorted(row.threads),
            row.trusted,
            position.get(i, -1),
            row.data if row.data is not None else row.load().model_dump_json(),
        ]
        for i, row in enumerate(rows)
    ]
    body = json.dumps(listed, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    matrix = np.zeros((len(with_vector), dims), dtype="<f4")
    for j, i in enumerate(with_vector):
        matrix[j] = np.asarray(rows[i].vector, dtype="<f4").reshape(-1)
    header = json.dumps(
        {
            "format": FORMAT,
            "generation": generation,
            "embedder": embedder.model_id if embedder is not None else None,
            "dims": dims,
            "rows": len(rows),
            "vectors": len(with_vector),
            "rows_bytes": len(body),
            "quarantine": [entry.model_dump(mode="json") for entry in quarantine],
            "sequence": sequence,
            "change": change,
            "whole_at": whole_at,
        },
        separators=(",", ":"),
    ).encode("utf-8")
    return b"".join((MAGIC, _LENGTH.pack(len(header)), header, body, matrix.tobytes()))


def decode(blob: bytes, embedder: EmbedderId | None) -> DecodedObject:
    """The generation and rows of ``blob``, built for ``embedder``'s space."""
    try:
        return _decode(blob, embedder)
    except (KeyError, TypeError, ValueError, IndexError, struct.error) as exc:
        raise CorruptIndexObjectError(f"not a cairn recall index object: {exc}") from exc


def _decode(blob: bytes, embedder: EmbedderId | None) -> DecodedObject:
    if blob[: len(MAGIC)] != MAGIC:
        raise ValueError("wrong magic")
    start = len(MAGIC) + _LENGTH.size
    (header_length,) = _LENGTH.unpack_from(blob, len(MAGIC))
    header: dict[str, Any] = json.loads(blob[start : start + header_length])
    dims = embedder.dims if embedder is not None else 0
    model = embedder.model_id if embedder is not None else None
    if header["format"] not in _READABLE or header["embedder"] != model or header["dims"] != dims:
        raise ValueError("another format or embedding space")
    rows_at = start + header_length
    vectors_at = rows_at + int(header["rows_bytes"])
    count = int(header["vectors"])
    if len(blob) != vectors_at + count * dims * 4:
        raise ValueError("truncated")
    listed = json.loads(blob[rows_at:vectors_at])
    if len(listed) != header["rows"]:
        raise ValueError("row count")
    matrix = np.frombuffer(blob, dtype="<f4", count=count * dims, offset=vectors_at)
    matrix = matrix.reshape(count, dims) if dims else matrix.reshape(0, 0)
    rows = [_row(entry, matrix) for entry in listed]
    quarantine = tuple(QuarantineEntry.model_validate(e) for e in header["quarantine"])
    sequence = header.get("sequence")
    return DecodedObject(
        generation=str(header["generation"]),
        rows=rows,
        quarantine=quarantine,
        sequence=int(sequence) if sequence is not None else None,
        change=str(header["change"]) if sequence is not None else None,
        whole_at=float(header["whole_at"]) if header.get("whole_at") is not None else None,
    )


def _row(entry: list[Any], matrix: np.ndarray[Any, Any]) -> IndexRow:
    (rid, namespace, strategy, searchable, content, confidence, first, last) = entry[:8]
    threads, trusted, position, data = entry[8:]
    return IndexRow(
        record_id=str(rid),
        namespace=str(namespace),
        strategy=str(strategy),
        searchable=str(searchable),
        content=str(content),
        confidence=float(confidence),
        first_seen_at=datetime.fromisoformat(first),
        last_seen_at=datetime.fromisoformat(last),
        threads=frozenset((str(kind), str(target)) for kind, target in threads),
        trusted=bool(trusted),
        load=lambda: RecordVersion.model_validate_json(data),
        vector=matrix[position] if position >= 0 else None,
        data=str(data),
    )
