"""How the ``cairn`` command shows record versions: as text for people, as JSON for scripts.

An erased version shows no content (``null`` in JSON, ``(erased)`` in text), only its digest.
Text for people shows every invisible character of stored text (tag characters, bidirectional
controls, zero-width characters, terminal escapes, line breaks) as a visible ``<U+XXXX>``
marker (``cairn.visible_text``), so a record cannot hide text or drive the terminal; JSON for
scripts keeps the stored text exactly (JSON escapes its control characters).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from cairn.local.store import describe_source
from cairn.models import RecordVersion, Source, Status
from cairn.quarantine import is_quarantined
from cairn.visible_text import neutralised


def when(moment: datetime) -> str:
    """A UTC time to the second, ISO 8601 with ``Z``."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def source_json(source: Source) -> dict[str, Any]:
    return source.model_dump(mode="json", exclude_none=True)


def content_of(version: RecordVersion) -> str | None:
    """The content, or ``None`` once erased (a tombstone keeps only the digest)."""
    return None if version.status is Status.ERASED else version.content


def version_json(version: RecordVersion) -> dict[str, Any]:
    """Everything an audit asks of one version, JSON-ready."""
    return {
        "record_id": version.record_id,
        "version": version.version,
        "created_at": version.created_at.isoformat(),
        "status": version.status.value,
        "namespace": version.namespace,
        "category": version.category,
        "content": content_of(version),
        "content_digest": version.content_digest,
        "confidence": version.confidence,
        "trust": version.trust.value,
        "quarantined": is_quarantined(version),
        "sources": [source_json(s) for s in version.sources],
        "seen_count": version.seen_count,
        "last_seen_at": version.last_seen_at.isoformat(),
        "supersedes": version.supersedes,
        "superseded_by": version.superseded_by,
        "tags": list(version.tags),
        "retract_reason": version.metadata.get("retract_reason"),
    }


def version_lines(version: RecordVersion) -> list[str]:
    """A few indented lines: header, content, sources, then links and reasons if any."""
    header = (
        f"v{version.version}  {when(version.created_at)}  {version.status.value:<10}  "
        f"{_trust(version)}  confidence {version.confidence:.2f}  seen {version.seen_count}x"
    )
    stored = content_of(version)
    content = neutralised(stored) if stored is not None else None
    lines = [
        header,
        f"    {content}"
        if content is not None
        else f"    (erased; digest {version.content_digest})",
        "    sources: " + "; ".join(describe_source(s) for s in version.sources),
    ]
    if version.supersedes:
        lines.append(f"    supersedes: {version.supersedes}")
    if version.superseded_by:
        lines.append(f"    superseded by: {version.superseded_by}")
    if reason := version.metadata.get("retract_reason"):
        lines.append(f"    retract reason: {neutralised(str(reason))}")
    return lines


def record_line(version: RecordVersion) -> str:
    """One line per record: id, version, namespace, category, content."""
    content = neutralised(content_of(version) or "(erased)")
    label = (
        f"{version.category}, {_trust(version)}" if is_quarantined(version) else version.category
    )
    return f"{version.record_id} v{version.version}  {version.namespace}  [{label}]  {content}"


def _trust(version: RecordVersion) -> str:
    """The trust label as read now: ``untrusted (quarantined)`` for a quarantined view."""
    quarantined = " (quarantined)" if is_quarantined(version) else ""
    return f"{version.trust.value}{quarantined}"
