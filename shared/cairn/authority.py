"""Authority: what evidence may change a record (DESIGN §4), decided by provenance alone.

Evidence has user authority when every source is the user's (or the system's) own, or a model
reading the user's own turn (a ``model`` source whose ``speaker`` is ``USER``); anything else (a
tool's output, the assistant's words, an import, a model with no speaker) is untrusted. A record
has the authority of its sources the same way.

- Untrusted evidence may change only an untrusted record. Against a record of user authority it
  never supersedes, retracts, edits or merges: formation files it beside the record (a
  ``contradicts`` edge when it disputes it, rendered as contested) and a repeat of it is not a
  confirmation.
- User evidence may change any record, but a user statement only replaces a user statement made
  no later than it: a later user statement beats an earlier one, never the reverse.
- Authority is per speaker. Where several people talk (a group chat), each source names who
  said it (``Source.speaker_id``; ``None`` is the actor themself). A record of user authority
  may be changed only by evidence from every person whose words it holds: one member's
  correction never replaces another's statement (formation files it beside it, contested, as
  for untrusted evidence), and a repeat by someone else is no confirmation of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import IntEnum

from cairn.models import TRUSTED_KINDS, RecordVersion, Role, Source, SourceKind
from cairn.quarantine import Quarantine


class Authority(IntEnum):
    """How much a piece of evidence (or a record) counts; higher outranks lower."""

    UNTRUSTED = 0
    USER = 1


def _speaks_for_user(source: Source, quarantine: Quarantine | None) -> bool:
    if quarantine is not None and quarantine.holds(source):
        return False  # an operator marked it compromised (cairn.quarantine)
    if source.kind in TRUSTED_KINDS:
        return True
    return source.kind is SourceKind.MODEL and source.speaker is Role.USER


def authority_of(sources: Sequence[Source], quarantine: Quarantine | None = None) -> Authority:
    """``USER`` if there are sources and each speaks for the user (none quarantined), else
    ``UNTRUSTED``."""
    if sources and all(_speaks_for_user(source, quarantine) for source in sources):
        return Authority.USER
    return Authority.UNTRUSTED


def speakers(sources: Sequence[Source]) -> frozenset[str | None]:
    """Who said ``sources`` (``speaker_id``; ``None`` for the actor themself)."""
    return frozenset(source.speaker_id for source in sources)


def may_change(
    sources: Sequence[Source],
    said_at: datetime | None,
    record: RecordVersion,
    quarantine: Quarantine | None = None,
) -> bool:
    """Whether evidence with ``sources``, said at ``said_at``, may supersede, retract, edit or
    merge into ``record`` (the rules in the module docstring; a quarantined source counts as
    untrusted on either side)."""
    evidence = authority_of(sources, quarantine)
    held = authority_of(record.sources, quarantine)
    if evidence < held:
        return False
    if held is Authority.USER and not speakers(record.sources) <= speakers(sources):
        return False  # another person's words: only they may change them
    if held is Authority.USER and said_at is not None:
        return said_at >= record.last_seen_at
    return True
