"""``PersonaFiles``: the bot's persona (``SOUL.md``, ``USER.md`` …) from a bucket, cached per
container.

The files are read once per warm container. After that, at most every ``check_every`` a
conditional read (``if_none_match`` the cached ETag) asks whether a file changed: the reader
answers without a body when it did not, and with the new bytes when it did, so an edit in the
bucket reaches the bot within ``check_every`` and an unchanged persona costs one small request
per file per interval, never a download per message. A missing file is left out of the prompt.
The reader is a port (``PersonaReader``); ``cairn.aws.s3_objects.S3ObjectReader`` is the S3 one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from cairn.errors import ConfigurationError, StoreUnavailableError
from cairn.ports import Clock
from cairn.recall.budget import truncate_utf8

logger = logging.getLogger(__name__)

DEFAULT_FILES = ("SOUL.md", "USER.md")
# A persona is a page or two; a bigger file is cut so it cannot crowd out the conversation.
MAX_FILE_BYTES = 32_768


class StoredFile(Protocol):
    """A file as the reader found it: ``body`` is ``None`` when it still had the ETag asked
    about (nothing was downloaded)."""

    @property
    def body(self) -> bytes | None: ...
    @property
    def etag(self) -> str: ...
    @property
    def version_id(self) -> str | None: ...


class PersonaReader(Protocol):
    """Where the persona files are kept."""

    def read(self, key: str, *, if_none_match: str | None = None) -> StoredFile | None:
        """The file at ``key``, ``None`` if there is none; ``ConfigurationError`` when the
        store refuses, ``StoreUnavailableError`` when it is out of reach."""
        ...


@dataclass(frozen=True, slots=True)
class PersonaFile:
    """One file as last read: its key, text, ETag and version id."""

    key: str
    text: str
    etag: str
    version_id: str | None


class PersonaFiles:
    """The persona prompt from ``prefix`` + each of ``files`` in ``reader``, cached."""

    def __init__(
        self,
        reader: PersonaReader,
        *,
        clock: Clock,
        files: Sequence[str] = DEFAULT_FILES,
        prefix: str = "",
        check_every: timedelta = timedelta(seconds=60),
    ) -> None:
        self._reader = reader
        self._clock = clock
        self._keys = tuple(f"{prefix}{name}" for name in files)
        self._check_every = check_every
        self._cached: dict[str, PersonaFile | None] = {}
        self._checked_at: datetime | None = None
        self._lock = threading.Lock()
        self.fetches = 0  # full reads (a 304 is not one), for tests and metrics

    def prompt(self) -> str:
        """Every present file, each under a ``# <name>`` heading, in the configured order."""
        with self._lock:
            now = self._clock.now()
            if self._checked_at is None or now - self._checked_at >= self._check_every:
                for key in self._keys:
                    self._cached[key] = self._refreshed(key, self._cached.get(key))
                self._checked_at = now
            present = [f for f in (self._cached.get(k) for k in self._keys) if f is not None]
        return "\n\n".join(f"# {f.key.rsplit('/', 1)[-1]}\n\n{f.text.strip()}" for f in present)

    def _refreshed(self, key: str, cached: PersonaFile | None) -> PersonaFile | None:
        try:
            found = self._reader.read(key, if_none_match=cached.etag if cached else None)
        except ConfigurationError as exc:
            if cached is None:
                raise
            # Trouble with the bucket: keep serving the last good persona.
            logger.warning("cairn: persona file %s not re-checked (%s)", key, type(exc).__name__)
            return cached
        except StoreUnavailableError:
            if cached is None:
                raise
            return cached
        if found is None:
            return None
        if found.body is None:
            return cached
        self.fetches += 1
        text, cut = truncate_utf8(found.body.decode("utf-8", errors="replace"), MAX_FILE_BYTES)
        if cut:
            logger.warning("cairn: persona file %s cut to %d bytes", key, MAX_FILE_BYTES)
        return PersonaFile(key=key, text=text, etag=found.etag, version_id=found.version_id)
