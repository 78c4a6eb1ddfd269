"""An export carries the history channel's links and access counts, and an import restores them
exactly, once, and only between records of the file's own scope: on the memory backend and
SQLite (the stores ``cairn export`` / ``cairn import`` open), in process."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from cairn.changes import Retract
from cairn.cli.errors import UsageError
from cairn.cli.export_file import ExportFile, read_export, scope_lines
from cairn.cli.import_restore import check_histories, restore_histories
from cairn.cli.import_sections import check_held, own_sections, restore_sections
from cairn.clock import FixedClock
from cairn.links import Link, Salience
from cairn.models import EdgeKind, Source, SourceKind, Trust
from cairn.ports import Stores
from cairn.testing import HashingEmbedder
from tests.conformance.backends import open_memory, open_sqlite
from tests.conformance.samples import MODEL, OTHER_ACTOR, SCOPE, USER, create

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
LINKER = Source(kind=SourceKind.MODEL, run_id="run-linker-1")
Opener = Callable[[Path], Stores]


@pytest.fixture(params=["memory", "sqlite"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    opened: list[Stores] = []
    factory = {"memory": open_memory, "sqlite": open_sqlite}[request.param]

    def open_one(path: Path) -> Stores:
        path.mkdir(parents=True, exist_ok=True)
        stores = factory(FixedClock(), path)
        opened.append(stores)
        return stores

    yield open_one
    for stores in opened:
        stores.close()


def _link(from_id: str, to_id: str, kind: EdgeKind, source: Source, scope: Any = SCOPE) -> Link:
    return Link(
        memory_id=scope.memory_id,
        actor_id=scope.actor_id,
        from_id=from_id,
        kind=kind,
        to_id=to_id,
        sources=(source,),
        created_at=T0,
    )


def _source(stores: Stores) -> tuple[list[str], list[str]]:
    """Records (one model-made, one retracted, one erased), a trusted and an untrusted link,
    counts past a cursor and salience; the other actor gets a link of its own. Returns the
    scope's record ids and its erased ones."""
    bees = create(stores, "I keep bees", sources=(USER,))
    hive = create(stores, "The hive is by the north fence", sources=(USER,))
    honey = create(stores, "Honey sells at the market", sources=(MODEL,))
    old = create(stores, "I live in Lyon", sources=(USER,))
    gone = create(stores, "My door code is 4412", sources=(USER,))
    stores.records.apply(SCOPE, [Retract(record_id=old.record_id)])
    assert stores.links is not None
    assert stores.access is not None
    stores.links.put(SCOPE, _link(bees.record_id, hive.record_id, EdgeKind.RELATES_TO, LINKER))
    stores.links.put(SCOPE, _link(honey.record_id, bees.record_id, EdgeKind.PART_OF, USER))
    stores.links.put(SCOPE, _link(gone.record_id, bees.record_id, EdgeKind.RELATES_TO, USER))
    stores.access.add(
        SCOPE, {bees.record_id: 3, hive.record_id: 1, gone.record_id: 2}, after=0, upto=7
    )
    stores.access.put_salience(
        SCOPE,
        [
            Salience(record_id=bees.record_id, shown=3, active_at=T0, value=0.5, measured_at=T0),
            Salience(record_id=honey.record_id, shown=0, active_at=T0, value=0.25, measured_at=T0),
        ],
    )
    stores.records.erase(SCOPE, gone.record_id)
    stores.links.erase_records(SCOPE, [gone.record_id])
    stores.access.erase_records(SCOPE, [gone.record_id])
    mine = create(stores, "theirs", scope=OTHER_ACTOR, namespace="/facts/a2/")
    also = create(stores, "theirs too", scope=OTHER_ACTOR, namespace="/facts/a2/")
    stores.links.put(
        OTHER_ACTOR, _link(mine.record_id, also.record_id, EdgeKind.RELATES_TO, USER, OTHER_ACTOR)
    )
    ids = [r.record_id for r in (bees, hive, honey, old, gone)]
    return ids, [gone.record_id]


def _exported(stores: Stores, erased: list[str]) -> list[dict[str, Any]]:
    """The lines ``cairn export`` writes for both actors, through JSON and back."""
    lines = [*scope_lines(stores, SCOPE, erased), *scope_lines(stores, OTHER_ACTOR, [])]
    return [json.loads(json.dumps(line)) for line in lines]


def _imported(stores: Stores, lines: list[dict[str, Any]]) -> tuple[int, int, int, int]:
    """What ``cairn import`` does with a cairn export into SCOPE; (records, links, counts,
    salience) restored."""
    read = read_export([json.dumps(line) for line in lines])
    own = [h for h in read.histories if h[0].scope == SCOPE]
    check_histories(own, SCOPE)
    sections = own_sections(read, SCOPE)
    check_held(stores, SCOPE, sections)
    records = restore_histories(stores, SCOPE, own, HashingEmbedder())
    carried = restore_sections(stores, SCOPE, sections)
    return (records.restored, carried.links, carried.counts, carried.salience)


def test_a_round_trip_into_a_fresh_store_is_equal_field_by_field(
    opener: Opener, tmp_path: Path
) -> None:
    source, target = opener(tmp_path / "a"), opener(tmp_path / "b")
    ids, erased = _source(source)
    lines = _exported(source, erased)
    assert [line["section"] for line in lines].count("link") == 3  # two of SCOPE, one other
    assert [line["section"] for line in lines].count("access") == 3

    first = _imported(target, [line for line in lines if line["actor_id"] == SCOPE.actor_id])
    assert target.links is not None
    assert target.access is not None
    assert source.links is not None
    assert source.access is not None
    before_again = _exported(target, erased)[: len(lines)]
    again = _imported(target, lines)

    assert first == (5, 2, 2, 2)
    assert again == (0, 0, 0, 0)  # a second import changes nothing
    assert _exported(target, erased) == before_again
    assert [x for x in _exported(target, erased) if x["actor_id"] == SCOPE.actor_id] == [
        x for x in lines if x["actor_id"] == SCOPE.actor_id
    ]
    assert tuple(target.links.every_link(SCOPE)) == tuple(source.links.every_link(SCOPE))
    assert {link.trust for link in target.links.every_link(SCOPE)} == {
        Trust.TRUSTED,
        Trust.UNTRUSTED,  # the model-proposed link stays untrusted
    }
    assert target.access.counts(SCOPE) == source.access.counts(SCOPE)
    assert target.access.salience(SCOPE) == source.access.salience(SCOPE)
    assert target.access.cursor(SCOPE) == 0  # the cursor indexes the source's journal
    for record_id in ids:
        assert target.records.history(SCOPE, record_id) == source.records.history(SCOPE, record_id)
    assert tuple(target.links.every_link(OTHER_ACTOR)) == ()  # another scope is not carried


def test_counts_counted_here_after_an_import_are_kept_by_a_second_import(
    opener: Opener, tmp_path: Path
) -> None:
    source, target = opener(tmp_path / "a"), opener(tmp_path / "b")
    ids, erased = _source(source)
    lines = _exported(source, erased)
    _imported(target, lines)
    assert target.access is not None
    target.access.add(SCOPE, {ids[0]: 2}, after=0, upto=1)  # this store's own journal counted

    _imported(target, lines)

    assert target.access.counts(SCOPE)[ids[0]] == 5  # 3 imported + 2 here, never lowered to 3
    assert target.access.cursor(SCOPE) == 1


def _without(lines: list[dict[str, Any]], record_id: str) -> list[dict[str, Any]]:
    return [x for x in lines if x.get("record_id") != record_id]


def _first_link(lines: list[dict[str, Any]]) -> dict[str, Any]:
    return next(x for x in lines if x["section"] == "link")


def _counted(record_id: str) -> dict[str, Any]:
    return {
        "format": "cairn.export/2",
        "section": "access",
        "memory_id": SCOPE.memory_id,
        "actor_id": SCOPE.actor_id,
        "record_id": record_id,
        "count": 2,
        "salience": None,
    }


def _edited(lines: list[dict[str, Any]], section: str, **change: Any) -> list[dict[str, Any]]:
    """The lines with the first line of ``section`` changed."""
    first = next(i for i, x in enumerate(lines) if x["section"] == section)
    return [*lines[:first], {**lines[first], **change}, *lines[first + 1 :]]


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda lines, ids: _without(lines, ids[1]), "which the file does not hold"),
        (lambda lines, ids: [*lines, _counted(ids[4])], "which is erased"),
        (lambda lines, ids: _edited(lines, "link", kind="contradicts"), "not in the vocabulary"),
        (
            lambda lines, ids: _edited(lines, "link", to_id=_first_link(lines)["from_id"]),
            "two different records",
        ),
        (
            lambda lines, ids: _edited(lines, "link", created_at="soon"),
            "holds a link cairn cannot read",
        ),
    ],
)
def test_a_link_or_count_that_cannot_be_restored_refuses_the_import_and_writes_nothing(
    opener: Opener, tmp_path: Path, damage: Any, message: str
) -> None:
    source, target = opener(tmp_path / "a"), opener(tmp_path / "b")
    ids, erased = _source(source)
    lines = damage(_exported(source, erased), ids)

    with pytest.raises(UsageError, match=message):
        _imported(target, lines)

    assert _exported(target, []) == []


def test_a_link_whose_end_is_a_record_of_another_scope_is_refused(
    opener: Opener, tmp_path: Path
) -> None:
    source, target = opener(tmp_path / "a"), opener(tmp_path / "b")
    _ids, erased = _source(source)
    lines = _exported(source, erased)
    theirs = next(x["record_id"] for x in lines if x["actor_id"] == OTHER_ACTOR.actor_id)

    with pytest.raises(UsageError, match=r"of another scope \(actor 'a2'\).*nothing was imported"):
        _imported(target, _edited(lines, "link", to_id=theirs))
    assert _exported(target, []) == []


def test_a_link_held_with_other_sources_refuses_the_import_and_keeps_the_held_one(
    opener: Opener, tmp_path: Path
) -> None:
    source, target = opener(tmp_path / "a"), opener(tmp_path / "b")
    _ids, erased = _source(source)
    lines = _exported(source, erased)
    _imported(target, lines)
    assert target.links is not None
    held = _exported(target, erased)
    trusted = next(x for x in lines if x["section"] == "link" and x["sources"][0]["kind"] == "user")
    laundered = [
        {**x, "sources": [LINKER.model_dump(mode="json")]} if x == trusted else x for x in lines
    ]

    with pytest.raises(UsageError, match="held here with other sources"):
        _imported(target, laundered)
    assert _exported(target, erased) == held


def test_an_older_export_of_records_only_still_imports(opener: Opener, tmp_path: Path) -> None:
    source, target = opener(tmp_path / "a"), opener(tmp_path / "b")
    ids, erased = _source(source)
    older = [
        {
            "format": "cairn.export/1",
            **{k: v for k, v in x.items() if k not in ("format", "section")},
        }
        for x in _exported(source, erased)
        if x["section"] == "record" and x["actor_id"] == SCOPE.actor_id
    ]

    assert _imported(target, older) == (5, 0, 0, 0)
    assert target.records.history(SCOPE, ids[0]) == source.records.history(SCOPE, ids[0])


def test_a_line_of_no_known_section_is_refused_naming_it() -> None:
    with pytest.raises(UsageError, match="line 2 is not a line of a cairn export"):
        read_export(["", json.dumps({"format": "cairn.export/2", "section": "turn"})])
    assert read_export([]) == ExportFile()
