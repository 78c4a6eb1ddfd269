"""``cairn import``: the links and access counts of an export, restored beside its records.

Only the sections of the scope the records are restored into are carried: a link or a count
belongs to the records of its own scope, and a copy into another scope is a new record (it
was never linked nor shown there). They are checked before anything is written, the file
(``own_sections``) and then the store (``check_held``):

- a link's kind must be in the vocabulary, and both its ends records of the file in the link's
  own scope, neither erased; a count's or a salience's record likewise; one line per key;
- a link the store holds under the same (from, kind, to) with other sources or another time
  refuses the whole import (a link's provenance and trust are kept exactly, never swapped).

Then, after the records (``restore_sections``): each link the store does not hold is put as it
was (its sources, so its trust, and its time); each count is raised to the exported one
(``AccessCounts.raise_counts``: never lowered, never added to), and each salience replaces a
held one only when measured later. So a second import, or a retry after a crash, changes
nothing. The access cursor of this store is left alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from cairn.cli.errors import UsageError
from cairn.cli.export_file import Access, ExportFile
from cairn.links import MAX_COUNTS_PER_ADD, Link
from cairn.models import RecordVersion, Scope, Status
from cairn.ports import Stores

NOTHING = "nothing was imported"
T = TypeVar("T")


@dataclass(frozen=True)
class Sections:
    """The links and access lines of one scope, checked; ``others`` counts those of other
    scopes, which are not carried."""

    links: tuple[Link, ...] = ()
    access: tuple[Access, ...] = ()
    others: int = 0


@dataclass(frozen=True)
class SectionsRestored:
    links: int
    counts: int
    salience: int


def own_sections(read: ExportFile, scope: Scope) -> Sections:
    """The file's links and access lines of ``scope``; ``UsageError`` for one that cannot be
    restored (see the module docstring)."""
    from cairn.errors import InvalidInputError
    from cairn.links import check_link

    heads = {h[-1].record_id: h[-1] for h in read.histories}
    links: dict[tuple[str, str, str], Link] = {}
    for number, link in read.links:
        if link.scope != scope:
            continue
        try:
            check_link(scope, link)
        except InvalidInputError as exc:
            raise UsageError(f"line {number}: {exc.message}; {NOTHING}") from exc
        for record_id in (link.from_id, link.to_id):
            _check_end(heads, scope, record_id, f"the link on line {number}")
        if link.key in links:
            raise UsageError(f"the link on line {number} is in the file twice; {NOTHING}")
        links[link.key] = link
    access: dict[str, Access] = {}
    for number, line in read.access:
        if line.scope != scope:
            continue
        _check_end(heads, scope, line.record_id, f"the access line {number}")
        if line.record_id in access:
            raise UsageError(f"the access line {number} names its record twice; {NOTHING}")
        access[line.record_id] = line
    others = len(read.links) + len(read.access) - len(links) - len(access)
    return Sections(links=tuple(links.values()), access=tuple(access.values()), others=others)


def _check_end(heads: dict[str, RecordVersion], scope: Scope, record_id: str, what: str) -> None:
    head = heads.get(record_id)
    if head is None:
        raise UsageError(
            f"{what} names record {record_id!r}, which the file does not hold; export the "
            f"records with their links and counts; {NOTHING}"
        )
    if head.scope != scope:
        raise UsageError(
            f"{what} names record {record_id!r} of another scope (actor {head.actor_id!r}); "
            f"a link or a count stays within one scope; {NOTHING}"
        )
    if head.status is Status.ERASED:
        raise UsageError(f"{what} names record {record_id!r}, which is erased; {NOTHING}")


def check_held(stores: Stores, scope: Scope, sections: Sections) -> None:
    """``UsageError`` (before anything is written) when the store cannot keep the sections,
    or holds one of the links with another provenance."""
    if sections.links and stores.links is None:
        raise UsageError(f"this store keeps no links; {NOTHING}")
    if sections.access and stores.access is None:
        raise UsageError(f"this store keeps no access counts; {NOTHING}")
    if not sections.links or stores.links is None:
        return
    held = {link.key: link for link in stores.links.every_link(scope)}
    for link in sections.links:
        if link.key in held and held[link.key] != link:
            raise UsageError(
                f"the link {link.from_id} {link.kind.value} {link.to_id} is held here with "
                f"other sources or another time; {NOTHING}: a link's provenance is kept exactly"
            )


def restore_sections(stores: Stores, scope: Scope, sections: Sections) -> SectionsRestored:
    """Put the links, raise the counts, replace older salience (see the module docstring);
    after the records, so every link's ends are there."""
    links = 0
    if stores.links is not None and sections.links:
        held = {link.key for link in stores.links.every_link(scope)}
        for link in sections.links:
            if link.key not in held:
                stores.links.put(scope, link)
                links += 1
    counts = salience = 0
    if stores.access is not None and sections.access:
        counted = {line.record_id: line.count for line in sections.access if line.count}
        for batch in _batches(sorted(counted)):
            counts += stores.access.raise_counts(scope, {rid: counted[rid] for rid in batch})
        measured = stores.access.salience(scope)
        newer = [
            line.salience
            for line in sections.access
            if line.salience is not None
            and (
                line.record_id not in measured
                or measured[line.record_id].measured_at < line.salience.measured_at
            )
        ]
        for values in _batches(newer):
            stores.access.put_salience(scope, values)
        salience = len(newer)
    return SectionsRestored(links=links, counts=counts, salience=salience)


def _batches(items: Sequence[T]) -> list[Sequence[T]]:
    return [items[i : i + MAX_COUNTS_PER_ADD] for i in range(0, len(items), MAX_COUNTS_PER_ADD)]
