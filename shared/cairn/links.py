"""Links: typed edges between two records of one scope, kept apart from the records.

A record's own ``edges`` are part of its version: adding one is a new version, and a
model-proposed edge written onto a user's record that way would make the record untrusted
forever (trust is the join of sources). So edges a job proposes live in a governed store of
their own (``cairn.ports.LinkStore``): a ``Link`` names its scope, two record ids of that
scope, a kind from the curated vocabulary (``LINK_KINDS``, never an invented type), its own
sources and so its own trust, and when it was made. A model-proposed link is untrusted and
never changes either record or its trust. A link is identified by (scope, from, kind, to):
proposing it again changes nothing. Erasing a record or an actor removes its links.

Access counts live here too: how many recalls showed a record (``AccessCounts``), counted
from the recall journal by a job (``cairn.history.access``), never written by recall itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import Field

from cairn.errors import InvalidInputError
from cairn.models import (
    ActorId,
    EdgeKind,
    Frozen,
    MemoryId,
    RecordId,
    Scope,
    Source,
    Trust,
    UtcDatetime,
    derive_trust,
)

# DESIGN §4's typed links; `contradicts` is consolidation's bookkeeping, not a link to walk.
LINK_KINDS = frozenset(
    {
        EdgeKind.RELATES_TO,
        EdgeKind.CAUSED_BY,
        EdgeKind.SUPERSEDES,
        EdgeKind.DECIDED_IN,
        EdgeKind.PART_OF,
        EdgeKind.OWNED_BY,
        EdgeKind.DISCUSSED_IN,
    }
)
MAX_LINKS_LISTED = 1000
# One add's records, so DynamoDB commits them and the cursor in one transaction (100 items).
MAX_COUNTS_PER_ADD = 90


class Link(Frozen):
    """One typed link from one record of a scope to another; see the module."""

    memory_id: MemoryId
    actor_id: ActorId
    from_id: RecordId
    kind: EdgeKind
    to_id: RecordId
    sources: tuple[Source, ...] = Field(min_length=1, max_length=16)
    created_at: UtcDatetime

    @property
    def trust(self) -> Trust:
        return derive_trust(self.sources)

    @property
    def scope(self) -> Scope:
        return Scope(memory_id=self.memory_id, actor_id=self.actor_id)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.from_id, self.kind.value, self.to_id)


def check_link(scope: Scope, link: Link) -> None:
    """Refuse a link of another scope, of a kind outside the vocabulary, or onto itself."""
    if link.scope != scope:
        raise InvalidInputError(
            "a link joins two records of one scope; this one names another scope: put it "
            "through that scope"
        )
    if link.kind not in LINK_KINDS:
        raise InvalidInputError(
            f"link kind {link.kind.value!r} is not in the vocabulary; use one of "
            f"{', '.join(sorted(k.value for k in LINK_KINDS))}"
        )
    if link.from_id == link.to_id:
        raise InvalidInputError("a link joins two different records; name another target")


def check_add(counts: Mapping[str, int], after: int, upto: int) -> None:
    """Refuse an increment below 1, a cursor that does not move forward, or too many records
    in one add (``cairn.ports.AccessCounts.add``)."""
    check_counts(counts)
    if not 0 <= after < upto:
        raise InvalidInputError(
            f"the cursor moves forward: after must be below upto (got {after} and {upto})"
        )


def check_counts(counts: Mapping[str, int]) -> None:
    """Refuse a count below 1, or too many records in one write (``AccessCounts.add`` and
    ``AccessCounts.raise_counts``)."""
    for record_id, count in counts.items():
        if count < 1:
            raise InvalidInputError(
                f"an access count grows by at least 1; got {count} for {record_id}"
            )
    if len(counts) > MAX_COUNTS_PER_ADD:
        raise InvalidInputError(
            f"at most {MAX_COUNTS_PER_ADD} records per add, got {len(counts)}: split the batch"
        )


class Salience(Frozen):
    """How live a record is (``cairn.history.decay``): ``value`` is 1.0 at ``active_at`` (when
    it was last shown, as far as the decay job can tell, or last confirmed) and halves per idle
    half-life, as measured at ``measured_at``. ``shown`` is the record's access count when
    measured, so the next run sees a showing in between. Kept beside the record, never a
    version; it never deletes anything."""

    record_id: RecordId
    shown: int = Field(ge=0)
    active_at: UtcDatetime
    value: float = Field(ge=0.0, le=1.0)
    measured_at: UtcDatetime


def check_salience(values: Sequence[Salience]) -> None:
    """Refuse too many records in one put, or one record twice (``AccessCounts.put_salience``)."""
    if len(values) > MAX_COUNTS_PER_ADD:
        raise InvalidInputError(
            f"at most {MAX_COUNTS_PER_ADD} records per put, got {len(values)}: split the batch"
        )
    if len({value.record_id for value in values}) != len(values):
        raise InvalidInputError("a record appears twice in one salience put; name each once")
