"""The bytes of a persisted snapshot, and the snapshot mapped back from them.

Layout (little-endian): the magic ``CAIRNSN1``; a u32 header length and the header (JSON: the
format, the stamp — scope digest, generation, embedder key and dims —, the row count, each
section's offset, dtype and length, the body's length and its CRC-32); then the body: every
section 64-byte aligned. The sections are the snapshot's own arrays (the unit matrix as
``build_snapshot`` normalised it, so a mapped snapshot is bit for bit the built one), its
postings as three flat arrays, each row's tokens as term numbers, each thread's rows, the
names (namespaces, strategies, terms, threads) as JSON, and one UTF-8 blob with four strings
per row: record id, content and the stored version's JSON (``first_seen_at`` is an array of
microseconds since the epoch, exact).

``load`` maps the file (``mmap``, read-only) and refuses (``None``) anything that is not
exactly such a file at exactly that stamp: another magic or format, another scope, generation
or embedding space, a length that is not the header's, a CRC that does not match. Nothing in
it is trusted before those checks, and a refused file is rebuilt from the store. The arrays
are views of the mapping, so the matrix stays out of the heap; per-row strings are decoded
only for the rows a recall reads (``cairn.recall.index.mapped``).
"""

from __future__ import annotations

import json
import mmap
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from cairn.models import EmbedderId
from cairn.recall.index.mapped import mapped_snapshot
from cairn.recall.index.snapshot import Snapshot
from cairn.recall.index.streamed import Sections

MAGIC = b"CAIRNSN1"
# 2: written by code whose change feed holds a ``re-embedded`` change for every vector stored.
# 3: a record distilled from a rollout is in no thread (``cairn.ports.stored_threads``); an
# older file may hold one as a thread's member, so it is rebuilt, never read.
FORMAT = 3
_READABLE = (FORMAT,)
_LENGTH = struct.Struct("<I")
_ALIGN = 64
_PAD = bytes(_ALIGN)
ANY_GENERATION = "*"  # a stamp's generation that accepts any (``load_stamped``)


@dataclass(frozen=True, slots=True)
class Stamp:
    """What a file must say to be used: its scope, generation and embedding space."""

    scope: str
    generation: str
    embedder: EmbedderId | None

    def header(self) -> dict[str, Any]:
        identity = self.embedder
        return {
            "scope": self.scope,
            "generation": self.generation,
            "embedder": identity.key if identity is not None else None,
            "dims": identity.dims if identity is not None else 0,
        }


# Where in the store's change feed a file's rows were read: the last change sequence before
# them and that change's event id (``cairn.recall.index.catch_up``).
Position = tuple[int, str]


def encode(
    sections: Sections, stamp: Stamp, position: Position | None = None
) -> list[bytes | memoryview]:
    """The file of ``sections`` at ``stamp``, noting the change feed ``position`` its rows were
    read after (``None``: not known); the parts are views (nothing is copied)."""
    return encode_stamped(sections, stamp.header(), position)


def encode_stamped(
    sections: Sections, stamped: dict[str, Any], position: Position | None
) -> list[bytes | memoryview]:
    """``encode`` with the stamp as a header says it (``Stamp.header``, or a file's own)."""
    named = {
        **sections.arrays,
        "matrix": sections.matrix.reshape(-1),
        "names": np.frombuffer(
            json.dumps(sections.names, ensure_ascii=False).encode("utf-8"), dtype=np.uint8
        ),
    }
    parts: list[bytes | memoryview] = []
    table: dict[str, list[Any]] = {}
    at, crc = 0, 0
    for name, array in named.items():
        pad = -at % _ALIGN
        if pad:
            parts.append(_PAD[:pad])
            crc = zlib.crc32(_PAD[:pad], crc)
            at += pad
        view = np.ascontiguousarray(array).data.cast("B")
        table[name] = [at, array.dtype.str, int(array.size)]
        parts.append(view)
        crc = zlib.crc32(view, crc)
        at += len(view)
    header = {
        "format": FORMAT,
        **stamped,
        "position": list(position) if position is not None else None,
        "rows": sections.size,
        "vectors": int(sections.matrix.shape[0]),
        "sections": table,
        "body_bytes": at,
        "crc32": crc,
    }
    encoded = json.dumps(header, separators=(",", ":")).encode("utf-8")
    # Spaces after the JSON, so the body (and every section in it) starts 64-byte aligned in
    # the file, and so in the mapping: an unaligned float32 matrix made each pass 6x slower.
    encoded += b" " * (-(len(MAGIC) + _LENGTH.size + len(encoded)) % _ALIGN)
    return [MAGIC, _LENGTH.pack(len(encoded)), encoded, *parts]


def load(path: Path, stamp: Stamp) -> Snapshot | None:
    """The snapshot in the file at ``path`` if it is whole and at exactly ``stamp``, else
    ``None`` (missing, torn, foreign, stale)."""
    found = load_stamped(path, stamp)
    return found[0] if found is not None else None


def load_stamped(path: Path, stamp: Stamp) -> tuple[Snapshot, str, Position | None] | None:
    """``load``, and the generation and change feed position the file was written at; a stamp
    whose generation is ``ANY_GENERATION`` accepts a file of the same scope and embedding
    space at whatever generation (a stale file a recall then brings up to date)."""
    try:
        with path.open("rb") as file:
            if file.seek(0, 2) <= len(MAGIC) + _LENGTH.size:
                return None
            mapping = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    try:
        return _load(mapping, stamp)
    except (KeyError, TypeError, ValueError, IndexError, struct.error, UnicodeDecodeError):
        return None


def _load(mapping: mmap.mmap, stamp: Stamp) -> tuple[Snapshot, str, Position | None] | None:
    checked = _checked(mapping)
    if checked is None:
        return None
    header, body = checked
    wanted = stamp.header()
    if stamp.generation == ANY_GENERATION:
        wanted["generation"] = header["generation"]
    if {key: header[key] for key in wanted} != wanted:
        return None  # another scope, generation or embedding space
    sections = _sections(mapping, header, body)

    def intact() -> bool:  # an erase zeroes the magic before anything else
        return mapping[: len(MAGIC)] == MAGIC

    snapshot = mapped_snapshot(sections, stamp.embedder, len(mapping), intact)
    return snapshot, str(header["generation"]), position_of(header)


def position_of(header: dict[str, Any]) -> Position | None:
    """The change feed position a file's header notes, if it does."""
    noted = header.get("position")
    return (int(noted[0]), str(noted[1])) if noted is not None else None


def load_sections(path: Path) -> tuple[Sections, dict[str, Any], Callable[[], bool]] | None:
    """The sections and header of the whole file of the current format at ``path``, whatever
    its stamp, and whether it is still intact (its magic not zeroed); else ``None``."""
    try:
        with path.open("rb") as file:
            if file.seek(0, 2) <= len(MAGIC) + _LENGTH.size:
                return None
            mapping = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        checked = _checked(mapping)
        if checked is None or checked[0]["format"] != FORMAT:
            return None
        sections = _sections(mapping, *checked)
    except (OSError, KeyError, TypeError, ValueError, IndexError, struct.error):
        return None
    return sections, checked[0], lambda: mapping[: len(MAGIC)] == MAGIC


def _checked(mapping: mmap.mmap) -> tuple[dict[str, Any], int] | None:
    """The header of a whole file of a readable format, and where its body starts."""
    if mapping[: len(MAGIC)] != MAGIC:
        return None
    (length,) = _LENGTH.unpack_from(mapping, len(MAGIC))
    start = len(MAGIC) + _LENGTH.size
    header: dict[str, Any] = json.loads(mapping[start : start + length])
    if header["format"] not in _READABLE:
        return None
    body = start + length
    if len(mapping) != body + int(header["body_bytes"]):
        return None  # truncated, or more than was written
    if zlib.crc32(memoryview(mapping)[body:]) != header["crc32"]:
        return None  # torn or damaged
    return header, body


def _sections(mapping: mmap.mmap, header: dict[str, Any], body: int) -> Sections:
    arrays: dict[str, npt.NDArray[Any]] = {}
    for name, (offset, dtype, count) in header["sections"].items():
        kind = np.dtype(dtype)
        arrays[name] = (
            np.frombuffer(mapping, dtype=kind, count=int(count), offset=body + int(offset))
            if count
            else np.zeros(0, dtype=kind)
        )
    rows, vectors = int(header["rows"]), int(header["vectors"])
    names = json.loads(arrays.pop("names").tobytes())
    matrix = arrays.pop("matrix").reshape(vectors, int(header["dims"]))
    return Sections(size=rows, arrays=arrays, names=names, matrix=matrix)
