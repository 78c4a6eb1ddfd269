"""Every list pages with ``limit`` and an opaque cursor bound to its scope and its filters."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pytest

from cairn.errors import InvalidCursorError, InvalidInputError
from cairn.models import Page
from cairn.ports import MAX_PAGE_SIZE, Stores
from tests.conformance.samples import OTHER_ACTOR, OTHER_MEMORY, SCOPE, create, event_input

T = TypeVar("T")
GARBAGE_CURSORS = ["garbage", "eyJ4IjoxfQ", "%%%", "0" * 64]


def page_through(fetch: Callable[[str | None], Page[T]], *, limit: int) -> list[T]:
    """Every item, following ``next_cursor`` until it runs out; checks each page's shape."""
    items: list[T] = []
    cursor: str | None = None
    for _ in range(100):
        page = fetch(cursor)
        assert len(page.items) <= limit
        items.extend(page.items)
        if page.next_cursor is None:
            return items
        assert isinstance(page.next_cursor, str)
        assert page.next_cursor
        cursor = page.next_cursor
    pytest.fail("pagination never ended")


def first_cursor(page: Page[Any]) -> str:
    assert page.next_cursor is not None, "expected more than one page"
    return page.next_cursor


def test_records_page_through_each_exactly_once_in_record_id_order(stores: Stores) -> None:
    made = [create(stores, f"Fact number {i}").record_id for i in range(7)]

    paged = page_through(
        lambda cursor: stores.records.list_records(SCOPE, limit=3, cursor=cursor), limit=3
    )

    ids = [v.record_id for v in paged]
    assert ids == sorted(made)
    assert paged == list(stores.records.list_records(SCOPE).items)


def test_events_page_through_each_exactly_once_in_time_order(stores: Stores) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    appended = [
        stores.events.append(SCOPE, event_input("s1", start + timedelta(seconds=(i * 5) % 7)))
        for i in range(7)
    ]

    paged = page_through(
        lambda cursor: stores.events.list_events(SCOPE, "s1", limit=2, cursor=cursor), limit=2
    )

    assert paged == sorted(appended, key=lambda e: (e.event_timestamp, e.event_id))
    assert paged == list(stores.events.list_events(SCOPE, "s1").items)


def test_sessions_page_through_each_exactly_once_by_session_id(stores: Stores) -> None:
    for name in ("s5", "s3", "s1", "s4", "s2"):
        stores.events.append(SCOPE, event_input(name))
        stores.events.append(SCOPE, event_input(name))

    paged = page_through(
        lambda cursor: stores.events.list_sessions(SCOPE, limit=2, cursor=cursor), limit=2
    )

    assert [s.session_id for s in paged] == ["s1", "s2", "s3", "s4", "s5"]
    assert {s.actor_id for s in paged} == {SCOPE.actor_id}


def test_actors_page_through_each_exactly_once_sorted(stores: Stores) -> None:
    actors = ["tg:5", "tg:3", "tg:1", "tg:4", "tg:2"]
    for actor in actors:
        stores.events.append(SCOPE.model_copy(update={"actor_id": actor}), event_input())

    paged = page_through(
        lambda cursor: stores.events.list_actors(SCOPE.memory_id, limit=2, cursor=cursor), limit=2
    )

    assert paged == sorted(actors)


def test_a_record_cursor_is_refused_in_another_scope_or_with_other_filters(
    stores: Stores,
) -> None:
    for i in range(3):
        create(stores, f"Fact number {i}")
        create(stores, f"Fact number {i}", scope=OTHER_ACTOR)
    cursor = first_cursor(stores.records.list_records(SCOPE, limit=1))

    for scope in (OTHER_ACTOR, OTHER_MEMORY):
        with pytest.raises(InvalidCursorError):
            stores.records.list_records(scope, limit=1, cursor=cursor)
    with pytest.raises(InvalidCursorError):
        stores.records.list_records(SCOPE, namespace_prefix="/facts/", limit=1, cursor=cursor)
    with pytest.raises(InvalidCursorError):
        stores.records.list_records(SCOPE, include_inactive=True, limit=1, cursor=cursor)
    with pytest.raises(InvalidCursorError):
        stores.records.list_records(
            SCOPE, as_of=datetime(2027, 1, 1, tzinfo=UTC), limit=1, cursor=cursor
        )
    assert stores.records.list_records(SCOPE, limit=1, cursor=cursor).items


def test_an_event_cursor_is_refused_in_another_scope_or_session(stores: Stores) -> None:
    for _ in range(3):
        for scope in (SCOPE, OTHER_ACTOR):
            stores.events.append(scope, event_input("s1"))
            stores.events.append(scope, event_input("s2"))
    cursor = first_cursor(stores.events.list_events(SCOPE, "s1", limit=1))

    with pytest.raises(InvalidCursorError):
        stores.events.list_events(OTHER_ACTOR, "s1", limit=1, cursor=cursor)
    with pytest.raises(InvalidCursorError):
        stores.events.list_events(SCOPE, "s2", limit=1, cursor=cursor)
    with pytest.raises(InvalidCursorError):
        stores.events.list_events(SCOPE, "s1", branch="b1", limit=1, cursor=cursor)


def test_session_and_actor_cursors_are_refused_elsewhere(stores: Stores) -> None:
    for scope in (
        SCOPE,
        OTHER_ACTOR,
        OTHER_MEMORY,
        OTHER_MEMORY.model_copy(update={"actor_id": "a9"}),
    ):
        stores.events.append(scope, event_input("s1"))
        stores.events.append(scope, event_input("s2"))
    stores.events.append(SCOPE.model_copy(update={"actor_id": "a3"}), event_input("s1"))
    sessions = first_cursor(stores.events.list_sessions(SCOPE, limit=1))
    actors = first_cursor(stores.events.list_actors(SCOPE.memory_id, limit=1))

    with pytest.raises(InvalidCursorError):
        stores.events.list_sessions(OTHER_ACTOR, limit=1, cursor=sessions)
    with pytest.raises(InvalidCursorError):
        stores.events.list_actors(OTHER_MEMORY.memory_id, limit=1, cursor=actors)


@pytest.mark.parametrize("garbage", GARBAGE_CURSORS)
def test_a_garbage_cursor_is_refused_by_every_list(stores: Stores, garbage: str) -> None:
    create(stores, "Fact")
    stores.events.append(SCOPE, event_input("s1"))
    lists: list[Callable[[], object]] = [
        lambda: stores.records.list_records(SCOPE, cursor=garbage),
        lambda: stores.events.list_events(SCOPE, "s1", cursor=garbage),
        lambda: stores.events.list_sessions(SCOPE, cursor=garbage),
        lambda: stores.events.list_actors(SCOPE.memory_id, cursor=garbage),
    ]

    for call in lists:
        with pytest.raises(InvalidCursorError):
            call()


@pytest.mark.parametrize("limit", [0, -1, MAX_PAGE_SIZE + 1])
def test_a_page_size_out_of_bounds_is_refused(stores: Stores, limit: int) -> None:
    with pytest.raises(InvalidInputError):
        stores.records.list_records(SCOPE, limit=limit)
    with pytest.raises(InvalidInputError):
        stores.events.list_events(SCOPE, "s1", limit=limit)
