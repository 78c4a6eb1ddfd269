"""Keyset pagination over sorted items, with cursors from ``cairn.cursor``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from cairn.cursor import decode_cursor, encode_cursor
from cairn.errors import InvalidInputError
from cairn.models import Page, Scope
from cairn.ports import MAX_PAGE_SIZE, EventStore

T = TypeVar("T")


def check_limit(limit: int) -> None:
    """Refuse a page size outside ``1..MAX_PAGE_SIZE``."""
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise InvalidInputError(f"limit must be between 1 and {MAX_PAGE_SIZE}, got {limit}")


def page_after(
    scope_key: str,
    query: dict[str, Any],
    items: Sequence[T],
    *,
    key: Callable[[T], str],
    limit: int,
    cursor: str | None,
) -> Page[T]:
    """The page of ``items`` (sorted by ``key``) that follows the cursor's position."""
    start = 0
    if cursor is not None:
        after = decode_cursor(scope_key, query, cursor)
        start = next((i for i, item in enumerate(items) if key(item) > after), len(items))
    chunk = tuple(items[start : start + limit])
    more = start + limit < len(items)
    next_cursor = encode_cursor(scope_key, query, key(chunk[-1])) if more and chunk else None
    return Page[T](items=chunk, next_cursor=next_cursor)


def event_sort_key(event_timestamp: Any, event_id: str) -> str:
    """Fixed-width, string-comparable order of events: timestamp (µs), then id."""
    return f"{event_timestamp:%Y-%m-%dT%H:%M:%S.%f}|{event_id}"


def session_ids(events: EventStore, scope: Scope) -> list[str]:
    """Every session id of ``scope``, in the store's order, read a page at a time."""
    found: list[str] = []
    cursor: str | None = None
    while True:
        page = events.list_sessions(scope, limit=MAX_PAGE_SIZE, cursor=cursor)
        found += [s.session_id for s in page.items]
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor
