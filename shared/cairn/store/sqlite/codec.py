"""How cairn values sit in SQLite columns: fixed-width UTC text times and float32 vector blobs.

Times are ISO-8601 UTC with exactly six fractional digits and a ``Z``
(``2026-01-01T00:00:00.000000Z``): one width for every instant from year 1 to 9999, so SQLite's
text comparison orders them as time does and ``created_at <= ?`` is an as-of test.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from cairn.errors import ConfigurationError, InvalidInputError

# float32, little-endian whatever the host: the file must read the same on every machine.
_FLOAT32_LE = np.dtype("<f4")


def encode_time(value: datetime) -> str:
    """The fixed-width UTC text of an aware datetime; naive datetimes are refused."""
    if value.tzinfo is None:
        raise InvalidInputError(
            "timestamps must be timezone-aware (UTC); attach a tzinfo to the datetime"
        )
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def decode_time(text: str) -> datetime:
    """The aware UTC datetime ``encode_time`` wrote."""
    return datetime.fromisoformat(text).astimezone(UTC)


def encode_vector(values: Sequence[float]) -> bytes:
    """float32 little-endian bytes of the values."""
    return np.asarray(values, dtype=_FLOAT32_LE).tobytes()


def decode_vector(blob: bytes, dims: int) -> npt.NDArray[np.float32]:
    """A fresh, writable native float32 array of ``dims`` values read from ``blob``."""
    values = np.frombuffer(blob, dtype=_FLOAT32_LE)
    if values.shape != (dims,):
        raise ConfigurationError(
            f"a stored vector has {values.size} values where {dims} were recorded; the "
            "database file is damaged, restore it from a backup"
        )
    return values.astype(np.float32)
