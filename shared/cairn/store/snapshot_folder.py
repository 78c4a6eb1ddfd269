"""Persisted recall index snapshots in a folder beside the store: the ``IndexSnapshotFolder``.

One file per (scope, embedding space): ``<scope digest>.<space digest>.snapshot``, the scope
and the embedder key only as truncated sha256 digests (as the S3 index objects name them), so
every file of a scope shares one prefix. A file is written whole or not at all: to a
temporary file of that prefix (``<scope digest>.<space digest>.<random>.tmp``), fsynced,
renamed over the old one, and the folder fsynced; a reader therefore finds the old file or the
new one, never half of either (what a reader checks besides:
``cairn.recall.index.snapshot_file``).

The files hold the content and vectors of every live head, so erasing a scope destroys them
(``erase_scope``, after the store's erase commits): each file of the scope's prefix, the
temporary files of a writer that died included, is overwritten with zeros in place, fsynced,
and unlinked. Overwritten in place, not truncated: a process that still maps the file reads
zeros (its next recall sees the generation moved and drops it), where a truncated mapping
would fault; and no erased byte is left in a block the file system still holds for it.

A folder that cannot be written (a read-only store, a full disk) publishes nothing: recall
then builds the scope's index in memory as it did before snapshots were persisted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import secrets
from collections.abc import Sequence
from pathlib import Path

from cairn.errors import ConfigurationError
from cairn.models import Scope

log = logging.getLogger(__name__)
SUFFIX = ".snapshot"
_ZEROS = bytes(1 << 20)
_MAGIC_BYTES = 8


def scope_digest(scope: Scope) -> str:
    """The file-name prefix of every snapshot of ``scope`` (no id in the clear)."""
    material = json.dumps([scope.memory_id, scope.actor_id], separators=(",", ":"))
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:32]


def space_digest(space: str) -> str:
    return hashlib.sha256(space.encode("utf-8")).hexdigest()[:16]


class SnapshotFolder:
    """Snapshot files in ``root`` (created on the first publish); ``writable=False`` publishes
    nothing and only reads what is there."""

    def __init__(self, root: Path, *, writable: bool = True) -> None:
        self.root = root
        self.writable = writable

    def path(self, scope: Scope, space: str) -> Path:
        return self.root / f"{scope_digest(scope)}.{space_digest(space)}{SUFFIX}"

    def publish(self, scope: Scope, space: str, parts: Sequence[bytes | memoryview]) -> int | None:
        if not self.writable:
            return None
        target = self.path(scope, space)
        temporary = target.with_name(f"{target.name[: -len(SUFFIX)]}.{secrets.token_hex(8)}.tmp")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            with temporary.open("xb") as out:
                for part in parts:
                    out.write(part)
                out.flush()
                os.fsync(out.fileno())
            temporary.replace(target)
            _fsync_folder(self.root)
            return target.stat().st_ino
        except OSError as exc:  # the recall stands; the next one tries again
            log.warning("recall index snapshot not written (%s)", exc.strerror or exc)
            with contextlib.suppress(ConfigurationError):
                _destroy(temporary)
            return None

    def discard(self, scope: Scope, space: str, inode: int) -> None:
        target = self.path(scope, space)
        with contextlib.suppress(OSError, ConfigurationError):
            if target.stat().st_ino == inode:
                _destroy(target)
                _fsync_folder(self.root)

    def erase_scope(self, scope: Scope) -> int:
        try:
            found = sorted(self.root.glob(f"{scope_digest(scope)}.*"))
        except OSError:
            return 0
        destroyed = sum(1 for path in found if _destroy(path))
        if destroyed:
            _fsync_folder(self.root)
        return destroyed


def _destroy(path: Path) -> bool:
    """Overwrite ``path`` with zeros in place, fsync it, unlink it; whether it was there.

    The first bytes (the magic) are zeroed in a write of their own, before the rest: a reader
    that still finds them afterwards read nothing zeroed (``cairn.recall.index.mapped``)."""
    try:
        with path.open("r+b") as file:
            remaining = os.fstat(file.fileno()).st_size
            file.write(_ZEROS[: min(remaining, _MAGIC_BYTES)])
            file.flush()
            remaining -= min(remaining, _MAGIC_BYTES)
            while remaining > 0:
                chunk = _ZEROS[: min(remaining, len(_ZEROS))]
                file.write(chunk)
                remaining -= len(chunk)
            file.flush()
            os.fsync(file.fileno())
    except FileNotFoundError:
        return False
    except OSError as exc:  # still unlink it: the bytes are then at least out of the folder
        log.warning("recall index snapshot not overwritten before delete (%s)", exc.strerror)
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise ConfigurationError(
            f"the recall index snapshot {path.name} in {path.parent} could not be deleted "
            f"({exc.strerror}); it holds erased content: delete that folder by hand"
        ) from exc
    return True


def _fsync_folder(folder: Path) -> None:
    """Make a rename or unlink in ``folder`` durable (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
