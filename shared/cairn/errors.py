"""One error tree for everything cairn raises on purpose.

Every class carries ``retryable``: whether the same call may succeed if simply tried again.
Callers branch on the class, never on the message. The mapping to HTTP status codes and to
queue retry decisions lives in one place (the API layer), keyed by these classes.

    CairnError
    ├── InvalidInputError            the caller sent something malformed; nothing changed
    │   ├── InvalidCursorError       a pagination cursor that is not ours, or not for this scope
    │   └── InvalidChangeError       a change that cannot apply (target not live, two on one record)
    ├── NotFoundError                no such id *in this scope* (other scopes look the same)
    │   ├── RecordNotFoundError
    │   ├── EventNotFoundError
    │   └── JournalNotFoundError
    ├── ConflictError                the state moved under the caller; re-read and retry the plan
    │   └── SnapshotConflictError    a record's head is no longer the version the planner saw
    ├── ConfigurationError           cairn is set up wrong (missing extra, unreadable store)
    │   └── EmbedderUnavailableError the local model or its tokenizer is not installed
    └── StoreUnavailableError        the backend is busy or unreachable (retryable)
        └── StoreTimeoutError
"""

from __future__ import annotations

from collections.abc import Sequence


class CairnError(Exception):
    """Base of every error cairn raises on purpose; ``retryable`` tells whether to try again."""

    retryable: bool = False

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInputError(CairnError):
    """The input was malformed or out of range; the message says what and how to fix it."""


class InvalidCursorError(InvalidInputError):
    """A pagination cursor was not issued by this store for this scope and query."""


class InvalidChangeError(InvalidInputError):
    """A change cannot be applied as planned (its target is not live, or is named twice)."""


class NotFoundError(CairnError):
    """No such item in the caller's scope. An id from another scope is reported this way too."""


class RecordNotFoundError(NotFoundError):
    def __init__(self, record_id: str, version: int | None = None) -> None:
        what = f"record {record_id!r}" + (f" version {version}" if version is not None else "")
        super().__init__(f"{what} does not exist in this scope")
        self.record_id = record_id
        self.version = version


class EventNotFoundError(NotFoundError):
    def __init__(self, event_id: str) -> None:
        super().__init__(f"event {event_id!r} does not exist in this session")
        self.event_id = event_id


class JournalNotFoundError(NotFoundError):
    def __init__(self, journal_id: str) -> None:
        super().__init__(f"journal entry {journal_id!r} does not exist in this scope")
        self.journal_id = journal_id


class ConflictError(CairnError):
    """The stored state changed since the caller read it; re-read and plan again."""

    retryable = True


class SnapshotConflictError(ConflictError):
    """At least one record's head moved past the version in the snapshot; nothing was applied."""

    def __init__(self, moved: Sequence[tuple[str, int, int | None]]) -> None:
        described = ", ".join(
            f"{rid} (expected v{want}, found {'none' if have is None else f'v{have}'})"
            for rid, want, have in moved
        )
        super().__init__(
            f"snapshot is stale, nothing was applied: {described}; re-read and plan again"
        )
        self.moved = tuple(moved)


class ConfigurationError(CairnError):
    """cairn is configured or installed wrong; the message names the fix."""


class EmbedderUnavailableError(ConfigurationError):
    """The local embedding model or its tokenizer cannot be loaded."""


class StoreUnavailableError(CairnError):
    """The backend is busy, throttled or unreachable; the same call may succeed later."""

    retryable = True


class StoreTimeoutError(StoreUnavailableError):
    """The backend did not answer in time."""
