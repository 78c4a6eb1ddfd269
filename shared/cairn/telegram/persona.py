"""``PersonaFiles``: the bot's persona (``SOUL.md``, ``USER.md`` …) from S3, cached per container.

The files are read once per warm container. After that, at most every ``check_every`` a
conditional ``GetObject`` (``IfNoneMatch`` the cached ETag) asks S3 whether a file changed: S3
answers 304 without a body when it did not, and the new bytes when it did, so an edit in the
bucket reaches the bot within ``check_every`` and an unchanged persona costs one small request
per file per interval, never a download per message. A missing file is left out of the prompt.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from cairn.errors import ConfigurationError, StoreUnavailableError
from cairn.ports import Clock
from cairn.recall.budget import truncate_utf8

logger = logging.getLogger(__name__)

DEFAULT_FILES = ("SOUL.md", "USER.md")
# A persona is a page or two; a bigger file is cut so it cannot crowd out the conversation.
MAX_FILE_BYTES = 32_768
_UNCHANGED = frozenset({"304", "NotModified"})
_MISSING = frozenset({"NoSuchKey", "404"})


@dataclass(frozen=True, slots=True)
class PersonaFile:
    """One file as last read: its key, text, ETag and version id."""

    key: str
    text: str
    etag: str
    version_id: str | None


class PersonaFiles:
    """The persona prompt from ``bucket``/``prefix`` + each of ``files``, cached."""

    def __init__(
        self,
        s3: Any,
        *,
        bucket: str,
        clock: Clock,
        files: Sequence[str] = DEFAULT_FILES,
        prefix: str = "",
        check_every: timedelta = timedelta(seconds=60),
    ) -> None:
        self._s3 = s3
        self._bucket = bucket
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
        from botocore.exceptions import BotoCoreError, ClientError

        conditional = {"IfNoneMatch": cached.etag} if cached is not None else {}
        try:
            answer = self._s3.get_object(Bucket=self._bucket, Key=key, **conditional)
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in _UNCHANGED:
                return cached
            if code in _MISSING:
                return None
            if cached is not None:  # S3 trouble: keep serving the last good persona
                logger.warning("cairn: persona file %s not re-checked (%s)", key, code)
                return cached
            raise ConfigurationError(
                f"cannot read persona file s3://{self._bucket}/{key} ({code}); check the "
                "bucket name and the function's s3:GetObject permission"
            ) from exc
        except BotoCoreError as exc:
            if cached is not None:
                return cached
            raise StoreUnavailableError("S3 is unreachable; the persona could not load") from exc
        self.fetches += 1
        body: bytes = answer["Body"].read()
        text, cut = truncate_utf8(body.decode("utf-8", errors="replace"), MAX_FILE_BYTES)
        if cut:
            logger.warning("cairn: persona file %s cut to %d bytes", key, MAX_FILE_BYTES)
        return PersonaFile(
            key=key, text=text, etag=str(answer["ETag"]), version_id=answer.get("VersionId")
        )
