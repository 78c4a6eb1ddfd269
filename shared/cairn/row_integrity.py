"""Reading record rows that may have been corrupted or tampered with in the store.

A stored version checks itself: its ``content_digest`` must be the digest of its content
(``RecordVersion``'s validator). A row that fails is never served. Read by id (``get``,
``get_version``, ``history``) it raises ``CorruptRecordError`` naming the record; met in a
listing, which feeds every recall of the scope, it is skipped and reported (a warning naming
the scope and record id, never the content), so one bad row cannot take the scope's recall down.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from cairn.errors import CorruptRecordError
from cairn.models import RecordVersion, Scope

logger = logging.getLogger(__name__)


def record_id_in(data: str | bytes) -> str | None:
    """The record id a row names, if it is readable JSON with one."""
    try:
        found: Any = json.loads(data)
    except ValueError:
        return None
    record_id = found.get("record_id") if isinstance(found, dict) else None
    return record_id if isinstance(record_id, str) else None


def _reason(error: ValidationError) -> str:
    # Field locations and the validators' own words; never the input (it is memory content).
    first = error.errors(include_input=False, include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"]) or "the row"
    return f"{where}: {first['msg'].removeprefix('Value error, ')}"


def read_version(data: str | bytes) -> RecordVersion:
    """The version a stored row holds; ``CorruptRecordError`` naming the record if the row
    fails its own checks."""
    try:
        return RecordVersion.model_validate_json(data)
    except ValidationError as exc:
        raise CorruptRecordError(record_id_in(data), _reason(exc)) from None


def listed_versions(scope: Scope, rows: Iterable[str | bytes]) -> list[RecordVersion]:
    """The versions of the rows that pass their own checks, in order; each row that fails is
    skipped and reported."""
    versions: list[RecordVersion] = []
    for data in rows:
        try:
            versions.append(read_version(data))
        except CorruptRecordError as exc:
            report_skipped(str(scope), exc)
    return versions


def report_skipped(scope: str, error: CorruptRecordError) -> None:
    """Log a corrupt row left out of a listing of ``scope``: scope and record id only."""
    logger.warning(
        "cairn: skipped a corrupt record row in scope %s (record %s); restore or erase it",
        scope,
        error.record_id or "unknown",
    )
