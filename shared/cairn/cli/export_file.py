"""The lines of a cairn export file, written and read (the format is in docs/operations.md).

``cairn.export/2`` writes, per actor, one ``record`` line per record (its whole history), then
one ``link`` line per link of the scope (``cairn.links.Link``, its own sources and so its own
trust), then one ``access`` line per record the access counts know (how many recalls showed
it, and its salience when the decay job measured it). Every line carries ``format`` and
``section``. A ``cairn.export/1`` file (records only, no ``section``) still reads: its lines
are record lines. The access cursor is not exported: it indexes the exporting store's recall
journal, which stays there.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import Field

from cairn.cli.errors import UsageError
from cairn.links import Link, Salience
from cairn.models import ActorId, Frozen, MemoryId, RecordId, Scope

if TYPE_CHECKING:
    from cairn.models import RecordVersion
    from cairn.ports import Stores

FORMAT = "cairn.export/2"
OLDER_FORMATS = ("cairn.export/1",)
SECTIONS = ("record", "link", "access")


class Access(Frozen):
    """One record's access count (``None`` when never counted) and salience (``None`` when
    never measured), as an ``access`` line carries them."""

    memory_id: MemoryId
    actor_id: ActorId
    record_id: RecordId
    count: int | None = Field(default=None, ge=1)
    salience: Salience | None = None

    @property
    def scope(self) -> Scope:
        return Scope(memory_id=self.memory_id, actor_id=self.actor_id)


@dataclass
class ExportFile:
    """What an export file holds, each item with the number of the line it came from."""

    histories: list[tuple[RecordVersion, ...]] = field(default_factory=list)
    links: list[tuple[int, Link]] = field(default_factory=list)
    access: list[tuple[int, Access]] = field(default_factory=list)


def scope_lines(stores: Stores, scope: Scope, erased: Sequence[str]) -> Iterator[dict[str, Any]]:
    """The scope's record lines (every record, ``erased`` ones too, in record id order), then
    its link and access lines."""
    from cairn.cli.progress import counted, listed

    heads = [head.record_id for head in listed(stores, scope, include_inactive=True)]
    for record_id in counted(sorted({*heads, *erased}), label=f"exporting {scope.actor_id}"):
        yield record_line(scope, stores.records.history(scope, record_id))
    yield from history_channel_lines(stores, scope)


def record_line(scope: Scope, versions: Sequence[RecordVersion]) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "section": "record",
        "memory_id": scope.memory_id,
        "actor_id": scope.actor_id,
        "record_id": versions[-1].record_id,
        "versions": [version.model_dump(mode="json") for version in versions],
    }


def history_channel_lines(stores: Stores, scope: Scope) -> list[dict[str, Any]]:
    """The scope's ``link`` lines (by key), then its ``access`` lines (by record id)."""
    lines: list[dict[str, Any]] = []
    if stores.links is not None:
        for link in stores.links.every_link(scope):
            lines.append({"format": FORMAT, "section": "link", **link.model_dump(mode="json")})
    if stores.access is not None:
        counts, salience = stores.access.counts(scope), stores.access.salience(scope)
        for record_id in sorted({*counts, *salience}):
            access = Access(
                memory_id=scope.memory_id,
                actor_id=scope.actor_id,
                record_id=record_id,
                count=counts.get(record_id),
                salience=salience.get(record_id),
            )
            lines.append({"format": FORMAT, "section": "access", **access.model_dump(mode="json")})
    return lines


def read_export(lines: Sequence[str]) -> ExportFile:
    """Every record history, link and access line of an export file, each checked;
    ``UsageError`` naming the first line that is not one."""
    import json

    from pydantic import ValidationError

    from cairn.models import RecordVersion

    found = ExportFile()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"line {number} is not JSON ({exc.msg}); check --format") from exc
        section = _section(item, number)
        fields = {k: v for k, v in item.items() if k not in ("format", "section")}
        try:
            if section == "record":
                versions = fields.get("versions")
                if not versions or not isinstance(versions, list):
                    raise UsageError(f"line {number} is a record line without versions")
                found.histories.append(tuple(RecordVersion.model_validate(v) for v in versions))
            elif section == "link":
                found.links.append((number, Link.model_validate(fields)))
            else:
                access = Access.model_validate(fields)
                _check_access(access, number)
                found.access.append((number, access))
        except ValidationError as exc:
            first = exc.errors(include_input=False, include_url=False)[0]
            where = ".".join(str(part) for part in first["loc"])
            raise UsageError(
                f"line {number} holds a {section} cairn cannot read ({where}: {first['msg']}); "
                "restore from an unedited export"
            ) from None
    return found


def _section(item: Any, number: int) -> str:
    if isinstance(item, dict) and item.get("format") in OLDER_FORMATS and "section" not in item:
        return "record"
    if isinstance(item, dict) and item.get("format") == FORMAT and item.get("section") in SECTIONS:
        return str(item["section"])
    raise UsageError(
        f"line {number} is not a line of a cairn export ({FORMAT}, or {OLDER_FORMATS[0]}); "
        "check --format"
    )


def _check_access(access: Access, number: int) -> None:
    if access.count is None and access.salience is None:
        raise UsageError(f"line {number} is an access line with neither a count nor a salience")
    if access.salience is not None and access.salience.record_id != access.record_id:
        raise UsageError(
            f"line {number} gives record {access.record_id!r} the salience of another record "
            f"({access.salience.record_id!r}); restore from an unedited export"
        )
