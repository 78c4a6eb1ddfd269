"""Quarantine: an operator marks a source as compromised; what came from it reads as untrusted.

A ``QuarantineEntry`` names one source by one field of ``cairn.models.Source``
(``SourceSelector``: a source kind such as ``tool``, a speaker role such as ``TOOL``, a rollout,
run, session or event id, or a group chat member's id) within one memory. The list is kept by
the store (``cairn.ports.QuarantineList``); history is never rewritten. At read time a version
any of whose sources the memory's list holds is shown through ``quarantined_view``: a
``QuarantinedVersion``, labelled untrusted (the rendering adds ``quarantined``), so recall
quotes it, dedup and the untrusted share treat it as untrusted, and the session's taint ledger
asks for a release before its text reaches a write. ``cairn.authority`` counts a quarantined
source as untrusted, so a quarantined record cannot outrank, and quarantined evidence (a
quarantined rollout's extraction) cannot change, what the user stated.

Removing an entry restores the stored labels at the next read; nothing was written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import Annotated, Protocol

from pydantic import Field

from cairn.models import Frozen, MemoryId, RecordVersion, Source, Trust, UtcDatetime

# The journal filter naming the entries a recall showed quarantined, so replay renders them so.
QUARANTINED_FILTER = "quarantined"


class SelectorField(StrEnum):
    """Which field of a source a selector matches."""

    KIND = "kind"
    SPEAKER = "speaker"
    ROLLOUT = "rollout"
    RUN = "run"
    SESSION = "session"
    EVENT = "event"
    # A person in a group chat (``Source.speaker_id``), e.g. a member's hijacked account.
    SPEAKER_ID = "speaker_id"


SelectorValue = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[^\s]+$")]


class SourceSelector(Frozen):
    """One field of a source and the value that marks it compromised."""

    field: SelectorField
    value: SelectorValue

    def holds(self, source: Source) -> bool:
        """Whether ``source`` has this field at this value."""
        actual = {
            SelectorField.KIND: source.kind.value,
            SelectorField.SPEAKER: source.speaker.value if source.speaker else None,
            SelectorField.ROLLOUT: source.rollout_id,
            SelectorField.RUN: source.run_id,
            SelectorField.SESSION: source.session_id,
            SelectorField.EVENT: source.event_id,
            SelectorField.SPEAKER_ID: source.speaker_id,
        }[self.field]
        return actual == self.value

    def __str__(self) -> str:
        return f"{self.field.value}:{self.value}"


def parse_selector(text: str) -> SourceSelector:
    """``FIELD:VALUE`` (``kind:tool``, ``rollout:rol-...``) as a selector; ``ValueError`` naming
    the fields when it is not one."""
    field, sep, value = text.partition(":")
    fields = ", ".join(f.value for f in SelectorField)
    if not sep or field not in {f.value for f in SelectorField} or not value:
        raise ValueError(f"a source is FIELD:VALUE with FIELD one of {fields}; got {text!r}")
    return SourceSelector(field=SelectorField(field), value=value)


class QuarantineEntry(Frozen):
    """One compromised source of one memory: who said so is the operator; why, in ``reason``
    (an operator's note, never memory content)."""

    memory_id: MemoryId
    selector: SourceSelector
    reason: str = Field(default="", max_length=500)
    added_at: UtcDatetime


class QuarantinedVersion(RecordVersion):
    """A read-time view of a stored version with a quarantined source: labelled untrusted.
    Never written: the store keeps the version as it was (built only by ``quarantined_view``)."""


class Quarantine:
    """A memory's quarantine list as a read-time test over sources; with ``load``, the list is
    read at the first test, not before (a pass that tests no source reads nothing)."""

    def __init__(
        self,
        entries: Iterable[QuarantineEntry] = (),
        *,
        load: Callable[[], Iterable[QuarantineEntry]] | None = None,
    ) -> None:
        self._load = load
        self._held = frozenset(entry.selector for entry in entries)

    @property
    def _selectors(self) -> frozenset[SourceSelector]:
        if self._load is not None:
            self._held, self._load = frozenset(e.selector for e in self._load()), None
        return self._held

    def __bool__(self) -> bool:
        return bool(self._selectors)

    def holds(self, source: Source) -> bool:
        """Whether any selector of the list marks ``source``."""
        return any(selector.holds(source) for selector in self._selectors)

    def covers(self, version: RecordVersion) -> bool:
        """Whether any source of ``version`` is quarantined."""
        return any(self.holds(source) for source in version.sources)

    def view(self, version: RecordVersion) -> RecordVersion:
        """``version`` as a reader sees it: ``quarantined_view`` when covered, else itself."""
        return quarantined_view(version) if self.covers(version) else version


def quarantined_view(version: RecordVersion) -> QuarantinedVersion:
    """``version`` labelled untrusted, everything else as stored (no validation: the stored
    version was validated, and only the label changes)."""
    if isinstance(version, QuarantinedVersion):
        return version
    fields = {name: getattr(version, name) for name in RecordVersion.model_fields}
    return QuarantinedVersion.model_construct(**{**fields, "trust": Trust.UNTRUSTED})


def is_quarantined(version: RecordVersion) -> bool:
    """Whether ``version`` is a quarantined read-time view."""
    return isinstance(version, QuarantinedVersion)


class _Listed(Protocol):
    def entries(self, memory_id: str) -> tuple[QuarantineEntry, ...]: ...


def quarantine_of(listed: _Listed | None, memory_id: str) -> Quarantine | None:
    """The memory's quarantine (``Stores.quarantine``), read when first tested; ``None``
    without a list."""
    if listed is None:
        return None
    return Quarantine(load=lambda: listed.entries(memory_id))
