"""The demo's scripted conversation, and the offline agent that files what the user stated.

The agent is not an LLM and infers nothing: it uses the offline extractor's rules
(``cairn.extract.statements``), which recognise explicit first-person statements in user turns ("I
prefer …", "I decided …", "my … is …", "remember that …"), and files each as a record with
source ``user``, citing the event and session it came from.
Everything else (questions, small talk, the assistant's own turns) is left alone. It is pure:
given events and the live records, it returns changes for the store to apply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cairn.changes import Change, Create, FoldIn, NewRecord
from cairn.extract.statements import statements_in
from cairn.local.store import default_namespace
from cairn.models import (
    Conversational,
    Event,
    RecordVersion,
    Role,
    Scope,
    Source,
    SourceKind,
    content_digest,
)

DEMO_SCOPE = Scope(memory_id="default", actor_id="demo-user")
# User-stated facts are filed with high confidence (DESIGN §4: user-stated outranks inferred).
STATED_CONFIDENCE = 0.9


@dataclass(frozen=True)
class Turn:
    role: Role
    text: str


@dataclass(frozen=True)
class Session:
    session_id: str
    title: str
    turns: tuple[Turn, ...]


def _user(text: str) -> Turn:
    return Turn(Role.USER, text)


def _assistant(text: str) -> Turn:
    return Turn(Role.ASSISTANT, text)


CONVERSATION: tuple[Session, ...] = (
    Session(
        "s1-onboarding",
        "Monday: getting to know the user",
        (
            _user("Hi there. My name is Ada Okafor."),
            _assistant("Nice to meet you, Ada. How can I help?"),
            _user(
                "I prefer oat milk flat whites in the morning. "
                "Remember that I'm allergic to peanuts, so check any food you order for me."
            ),
            _assistant("Noted: oat milk, and no peanuts."),
            _user("Can you check tomorrow's weather?"),
            _assistant("Sunny, 21 degrees."),
        ),
    ),
    Session(
        "s2-planning",
        "Wednesday: planning the week",
        (
            _user("We need to pick a database for the new billing service."),
            _assistant("Postgres or DynamoDB are the usual choices; what matters most?"),
            _user("I decided to use Postgres for billing, because it needs strict transactions."),
            _user("My office is in Lisbon. I prefer meetings before 11am."),
            _user("Remember that the board breakfast meeting is on Friday at 8:30."),
            _assistant("Got it. Anything else for Friday?"),
        ),
    ),
)

QUESTIONS: tuple[str, ...] = (
    "What should I order for the user's breakfast meeting?",
    "Which database did we choose for billing, and why?",
)


def read_event(event: Event) -> list[NewRecord]:
    """Records for what the user stated in ``event``, each citing the event and its session."""
    source = Source(kind=SourceKind.USER, event_id=event.event_id, session_id=event.session_id)
    records: list[NewRecord] = []
    for payload in event.payload:
        if not isinstance(payload, Conversational) or payload.role is not Role.USER:
            continue
        for statement in statements_in(payload.text):
            records.append(
                NewRecord(
                    namespace=default_namespace(statement.category, event.actor_id),
                    category=statement.category,
                    content=statement.content,
                    confidence=STATED_CONFIDENCE,
                    sources=(source,),
                    seen_at=event.event_timestamp,
                )
            )
    return records


def plan_filing(candidates: Sequence[NewRecord], live: Sequence[RecordVersion]) -> list[Change]:
    """Create each new statement; an exact repeat of a live record is folded into it instead,
    so running the demo twice confirms rather than duplicates. A repeat within ``candidates``
    is planned once (a record may be named by only one change per apply)."""
    known = {version.content_digest: version.record_id for version in live}
    planned: set[str] = set()
    changes: list[Change] = []
    for record in candidates:
        digest = content_digest(record.content)
        if digest in planned:
            continue
        planned.add(digest)
        if digest in known:
            changes.append(FoldIn(record_id=known[digest], add_sources=record.sources))
        else:
            changes.append(Create(record=record))
    return changes
