"""Pagination of answers the API assembles itself (newest-first events, merged records).

The ``nextToken`` is a cairn cursor (``cairn.cursor``): opaque, bound to the scope and
the query that issued it, refused elsewhere. Positions are sort keys, so a page boundary holds
even when items before it are deleted between calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from cairn.cursor import decode_cursor, encode_cursor
from cairn.errors import InvalidCursorError

T = TypeVar("T")

# AgentCore's documented default page size for its list operations.
DEFAULT_MAX_RESULTS = 20


def page_of(
    items: Sequence[T],
    *,
    scope_key: str,
    query: dict[str, Any],
    position: Callable[[T], Any],
    limit: int,
    token: str | None,
    descending: bool = False,
) -> tuple[list[T], str | None]:
    """The page of ``items`` (sorted by ``position``, descending if so) after ``token``."""
    chosen = list(items)
    if token is not None:
        after = token_position(scope_key, query, token)
        try:
            chosen = [
                item
                for item in chosen
                if (position(item) < after if descending else position(item) > after)
            ]
        except TypeError:
            raise InvalidCursorError(
                "pagination token is malformed; pass back the nextToken exactly as returned"
            ) from None
    page = chosen[:limit]
    more = len(chosen) > limit
    return page, encode_cursor(scope_key, query, position(page[-1])) if more else None


def token_position(scope_key: str, query: dict[str, Any], token: str) -> Any:
    """The position ``token`` resumes after; ``InvalidCursorError`` if it is malformed or was
    issued for another scope or query. Operations with effects call it before acting."""
    after = decode_cursor(scope_key, query, token)
    if not isinstance(after, str | list):
        raise InvalidCursorError(
            "pagination token is malformed; pass back the nextToken exactly as returned"
        )
    return after
