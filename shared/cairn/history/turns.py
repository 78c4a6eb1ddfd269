"""A session's turns, as the history pyramid numbers them.

A turn is one main-branch event that carries conversation text (an event on a branch is an
alternative timeline, and an event of blobs only says nothing to summarise). Turns are numbered
from 1 in (timestamp, event id) order. Numbers are fixed when turns are rolled up: the turns a
rollup has not covered yet are those after the last level-1 chunk's last event, numbered on from
its ``to_seq``; an event appended later with an older timestamp is never renumbered into a
chunk (it stays outside the pyramid, and is still read as an event).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from cairn.chunks import Chunk
from cairn.models import Conversational, Event, Role, Scope, Source, SourceKind
from cairn.paging import event_sort_key
from cairn.ports import MAX_PAGE_SIZE, EventStore

# Who said a turn decides its provenance: only the user's words are the user's.
_KIND_OF_ROLE = {
    Role.USER: SourceKind.USER,
    Role.ASSISTANT: SourceKind.MODEL,
    Role.TOOL: SourceKind.TOOL,
    Role.OTHER: SourceKind.TOOL,
}


def role_source(role: Role, session_id: str) -> Source:
    """The provenance of words said in ``role``: only the user's words are the user's."""
    return Source(kind=_KIND_OF_ROLE[role], session_id=session_id)


@dataclass(frozen=True, slots=True)
class Turn:
    """One numbered turn: its event, time, the words said and who said them."""

    seq: int
    event_id: str
    session_id: str
    at: datetime
    lines: tuple[tuple[Role, str], ...]

    @property
    def text(self) -> str:
        """The turn as one block of ``ROLE: words`` lines."""
        return "\n".join(f"{role.value}: {words}" for role, words in self.lines)

    @property
    def sources(self) -> tuple[Source, ...]:
        """One source per kind of speaker in the turn, citing the session."""
        return tuple(dict.fromkeys(role_source(role, self.session_id) for role, _ in self.lines))


def session_events(events: EventStore, scope: Scope, session_id: str) -> Iterator[Event]:
    """Every event of the session in (timestamp, event id) order, page after page."""
    cursor: str | None = None
    while True:
        page = events.list_events(scope, session_id, limit=MAX_PAGE_SIZE, cursor=cursor)
        yield from page.items
        if page.next_cursor is None:
            return
        cursor = page.next_cursor


def turns_after(
    events: EventStore, scope: Scope, session_id: str, last: Chunk | None
) -> list[Turn]:
    """The session's turns after ``last`` (the last level-1 chunk; ``None``: all of them),
    numbered on from its ``to_seq``."""
    after = event_sort_key(last.period_end, last.children[-1]) if last is not None else ""
    seq = last.to_seq if last is not None else 0
    found: list[Turn] = []
    for event in session_events(events, scope, session_id):
        if (
            event.branch is not None
            or event_sort_key(event.event_timestamp, event.event_id) <= after
        ):
            continue
        lines = tuple((p.role, p.text) for p in event.payload if isinstance(p, Conversational))
        if not lines:
            continue
        seq += 1
        found.append(Turn(seq, event.event_id, session_id, event.event_timestamp, lines))
    return found
