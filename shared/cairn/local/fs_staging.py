"""Staged rollouts as files: the embedded twin of ``cairn.aws.s3_staging.S3StagingStore``.

Each payload is one file at ``<root>/<key>``, with the same key scheme as S3
(``cairn.rollout.staging_keys``). A put writes a temporary file in the target directory, fsyncs
it, then hard-links it into place: ``os.link`` is atomic and refuses to replace an existing
file, so a reader never sees a half-written payload and two racing writers can never silently
overwrite each other (``os.replace`` would let the last one win). The directory is fsynced
after every link and unlink so an acknowledged put or delete survives power loss. Files are
private to the user (mode 0600, directories 0700): they hold conversation text.

A put holds an exclusive ``flock`` on its temporary file from before its first byte until the
file is unlinked. The kernel drops the lock when the process dies, so a temporary file with
bytes in it and no lock held is one a killed put left (``abandoned_temporary``); the start-up
tidy deletes it at once (``cairn.local.leftovers``). Without ``fcntl`` (Windows) there is no
such lock and only the tidy's age rule applies.

Needs a filesystem with hard links (every local POSIX filesystem, NTFS).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

from cairn.errors import (
    ConfigurationError,
    RolloutConflictError,
    RolloutNotFoundError,
    StoreUnavailableError,
)
from cairn.models import Scope
from cairn.rollout.staging_keys import check_payload, scope_prefix, staging_key

_TEMP_SUFFIX = ".tmp"


class FilesystemStagingStore:
    """Write-once staged payloads under the directory ``root`` (created on first put)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).expanduser()

    def put(self, scope: Scope, rollout_id: str, payload: bytes) -> str:
        """Stage ``payload`` and return its key; see ``cairn.ports.StagingStore.put``."""
        key = staging_key(scope, rollout_id)
        check_payload(payload)
        path = self._path(key)
        with _translated_os_errors(self.root):
            _make_private_dirs(path.parent)
            with _synced_temp(path.parent, rollout_id, payload) as temp:
                try:
                    os.link(temp, path)
                except FileExistsError:
                    if path.read_bytes() != payload:
                        raise RolloutConflictError(rollout_id) from None
                    return key
            _fsync_dir(path.parent)
        return key

    def get(self, scope: Scope, rollout_id: str) -> bytes:
        """The staged bytes; ``RolloutNotFoundError`` if nothing is staged under that id."""
        path = self._path(staging_key(scope, rollout_id))
        with _translated_os_errors(self.root):
            try:
                return path.read_bytes()
            except FileNotFoundError:
                raise RolloutNotFoundError(rollout_id) from None

    def delete(self, scope: Scope, rollout_id: str) -> None:
        """Remove the staged payload; an absent one is a no-op."""
        path = self._path(staging_key(scope, rollout_id))
        with _translated_os_errors(self.root):
            try:
                path.unlink()
            except FileNotFoundError:
                return
            _fsync_dir(path.parent)

    def erase_scope(self, scope: Scope) -> int:
        """Delete every payload staged in ``scope`` (and any leftover temp files)."""
        directory = self._path(scope_prefix(scope).rstrip("/"))
        with _translated_os_errors(self.root):
            if not directory.is_dir():
                return 0
            erased = 0
            for entry in directory.iterdir():
                entry.unlink()
                erased += 0 if entry.name.startswith(".") else 1
            directory.rmdir()
            _fsync_dir(directory.parent)
        return erased

    def _path(self, key: str) -> Path:
        return self.root.joinpath(*key.split("/"))


def _make_private_dirs(directory: Path) -> None:
    missing: list[Path] = []
    for candidate in (directory, *directory.parents):
        if candidate.is_dir():
            break
        missing.append(candidate)
    for created in reversed(missing):
        created.mkdir(mode=0o700, exist_ok=True)
        # A new directory entry is durable only once its parent directory is fsynced.
        _fsync_dir(created.parent)


@contextmanager
def _synced_temp(directory: Path, rollout_id: str, payload: bytes) -> Iterator[Path]:
    """A temporary file holding ``payload``, fsynced and locked; unlinked, then unlocked, after."""
    # A leading dot can never collide with a key: rollout ids start with a letter or digit.
    temp = directory / f".{rollout_id}.{secrets.token_hex(8)}{_TEMP_SUFFIX}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        if fcntl is not None:  # held before the first byte: see the module docstring
            fcntl.flock(fd, fcntl.LOCK_EX)
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
        yield temp
    finally:
        temp.unlink(missing_ok=True)
        os.close(fd)


def abandoned_temporary(path: Path) -> bool:
    """Whether the temporary file ``path`` was left by a put whose process is gone: it holds
    bytes and no process holds its lock. ``False`` when it cannot be told (no ``fcntl``, the
    file is gone or unreadable, or a put has created it and not yet written)."""
    if fcntl is None:
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return os.fstat(fd).st_size > 0
    except OSError:  # a live put holds it
        return False
    finally:
        os.close(fd)  # drops the lock taken here, if any


def _fsync_dir(directory: Path) -> None:
    if os.name != "posix":  # Windows cannot open a directory; NTFS journals metadata itself.
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def _translated_os_errors(root: Path) -> Iterator[None]:
    """Turn filesystem failures into cairn errors that say what to fix."""
    try:
        yield
    # FileExistsError here comes from mkdir: a file sits where a staging directory should be
    # (a link's FileExistsError is handled by ``put`` itself).
    except (PermissionError, FileExistsError, NotADirectoryError, IsADirectoryError) as exc:
        raise ConfigurationError(
            f"the staging directory {str(root)!r} is not usable ({exc.strerror}); "
            "point cairn at a directory this user can write"
        ) from exc
    except OSError as exc:
        raise StoreUnavailableError(
            f"the staging directory {str(root)!r} failed ({exc.strerror}); "
            "check free space and try again"
        ) from exc
