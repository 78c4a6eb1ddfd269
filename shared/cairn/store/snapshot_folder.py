"""Persisted recall index snapshots in a folder beside the store: the ``IndexSnapshotFolder``.

One file per (scope, embedding space): ``<scope digest>.<space digest>.snapshot``, the scope
and the embedder key only as truncated sha256 digests (as the S3 index objects name them), so
every file of a scope shares one prefix. A file is written whole or not at all: to a
temporary file of that prefix (``<scope digest>.<space digest>.<random>.tmp``), fsynced,
renamed over the old one, and the folder fsynced; a reader therefore finds the old file or the
new one, never half of either (what a reader checks besides:
``cairn.recall.index.snapshot_file``). The old file, held open across the rename, is then
overwritten with zeros in place like an erased one (below): a rename alone would leave its
blocks, which may hold content erased since it was written (an erase whose own destruction of
the files never ran: the process died after its commit), free but unwritten. A process still
mapping it reads zeros and maps the new file. Only a crash between the rename and that
overwrite leaves the old bytes in free blocks, in no file of the folder.

The files hold the content and vectors of every live head. Erasing records (``erase_records``,
after the store's erase commits) writes each file of the scope that holds one again without
their rows, with the compactor the recall index gives (``use_compactor``:
``cairn.recall.index.compact``), under a lock of the folder so two erases never compact from
one file; without one, or where that fails, it destroys them as erasing a scope does
(``erase_scope``): each file of the scope's prefix, the
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
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

from cairn.errors import ConfigurationError
from cairn.models import Scope
from cairn.ports import SnapshotCompactor

try:
    import fcntl
except ImportError:  # no advisory locks (Windows): an erase destroys the files instead
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)
SUFFIX = ".snapshot"
_ZEROS = bytes(1 << 20)
_MAGIC_BYTES = 8
_LOCK = "compact.lock"  # no scope prefix: never matched by a scope's glob


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
        self._compactor: SnapshotCompactor | None = None

    def use_compactor(self, compactor: SnapshotCompactor) -> None:
        self._compactor = compactor

    def path(self, scope: Scope, space: str) -> Path:
        return self.root / f"{scope_digest(scope)}.{space_digest(space)}{SUFFIX}"

    def publish(self, scope: Scope, space: str, parts: Sequence[bytes | memoryview]) -> int | None:
        if not self.writable:
            return None
        return self._write(self.path(scope, space), parts)

    def _write(self, target: Path, parts: Sequence[bytes | memoryview]) -> int | None:
        temporary = target.with_name(f"{target.name[: -len(SUFFIX)]}.{secrets.token_hex(8)}.tmp")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            with temporary.open("xb") as out:
                for part in parts:
                    out.write(part)
                out.flush()
                os.fsync(out.fileno())
            with _opened(target) as replaced:
                temporary.replace(target)
                _fsync_folder(self.root)
                if replaced is not None:  # see the module docstring: no old byte outlives it
                    _zero_replaced(replaced)
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

    def erase_records(self, scope: Scope, record_ids: Collection[str]) -> int:
        compactor = self._compactor
        if compactor is None or not self.writable or fcntl is None:
            return self.erase_scope(scope)
        try:
            found = sorted(self.root.glob(f"{scope_digest(scope)}.*"))
        except OSError:
            return 0
        done = 0
        with _locked(self.root) as locked:  # two erases never compact from the same file
            for path in found:
                written = locked and path.suffix == SUFFIX and compactor(path, record_ids)
                if written is True:
                    continue  # it holds none of them
                done += 1
                if not written or self._write(path, written) is None:
                    _destroy(path)  # a temporary file, one that cannot be read or rewritten
        if done:
            _fsync_folder(self.root)
        return done

    def erase_scope(self, scope: Scope) -> int:
        try:
            found = sorted(self.root.glob(f"{scope_digest(scope)}.*"))
        except OSError:
            return 0
        destroyed = sum(1 for path in found if _destroy(path))
        if destroyed:
            _fsync_folder(self.root)
        return destroyed


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[bool]:
    """The folder's compaction lock held (``False``: it could not be taken)."""
    assert fcntl is not None
    try:
        lock = (folder / _LOCK).open("a+b")
    except OSError:
        yield False
        return
    with lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield True
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


@contextlib.contextmanager
def _opened(path: Path) -> Iterator[BinaryIO | None]:
    """``path`` opened for writing while it is replaced (``None`` if there is none yet)."""
    try:
        file = path.open("r+b")
    except OSError:
        yield None
        return
    with file:
        yield file


def _zero_replaced(file: BinaryIO) -> None:
    """``_zero`` the file a publish replaced; the new file stands if that fails."""
    try:
        _zero(file)
    except OSError as exc:
        log.warning("replaced recall index snapshot not overwritten (%s)", exc.strerror or exc)


def _zero(file: BinaryIO) -> None:
    """Overwrite ``file`` with zeros in place and fsync it, the magic first in a write of its
    own (a reader that still finds it read nothing zeroed: ``cairn.recall.index.mapped``)."""
    file.seek(0)
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


def _destroy(path: Path) -> bool:
    """Overwrite ``path`` with zeros in place (``_zero``), unlink it; whether it was there."""
    try:
        with path.open("r+b") as file:
            _zero(file)
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
