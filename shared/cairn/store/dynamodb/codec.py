"""How cairn values sit in DynamoDB items: keys, attribute values, vectors, item size.

Keys (``docs/dynamodb.md`` has the full table of item shapes):

    items   pk = R#<memory>|<actor>      sk = H#<record_id>                  head
                                         sk = V#<record_id>#<version:010>    version
                                         sk = J#<journal_id>                 journal entry
    events  pk = E#<memory>|<actor>|<session>   sk = <event time>#<event_id>  event
            pk = S#<memory>|<actor>             sk = <session_id>             session summary
            pk = A#<memory>                     sk = <actor_id>               actor summary

``|`` cannot occur in memory, actor or session ids, so a partition key names one scope. Every
character a record id may contain sorts after ``#`` and ``$``, which is what makes
``V#<id>#<version>`` sort by (record id, version) and the range bounds below exact.

Models are stored whole as their JSON (attribute ``d``): JSON keeps event blobs exactly (ints
stay ints), where DynamoDB numbers would come back as ``Decimal``. A few fields are copied
into plain attributes only to serve key conditions and filters.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from cairn.errors import ConfigurationError, InvalidInputError
from cairn.models import Event, JournalEntry, RecordVersion, Scope, Status
from cairn.row_integrity import read_version

Item = dict[str, Any]

# float32, little-endian whatever the host: 4 bytes a dimension instead of ~20 as JSON text.
_FLOAT32_LE = np.dtype("<f4")

MAX_ITEM_BYTES = 400 * 1024
MAX_TRANSACTION_BYTES = 4 * 1024 * 1024
MAX_TRANSACTION_ITEMS = 100

HEADS_FROM, HEADS_UNTIL = "H#", "H$"
VERSIONS_FROM, VERSIONS_UNTIL = "V#", "V$"
JOURNAL_FROM = "J#"


# --- attribute values ---------------------------------------------------------------------


def s(value: str) -> dict[str, str]:
    return {"S": value}


def n(value: int) -> dict[str, str]:
    return {"N": str(value)}


def text(item: Item, name: str) -> str:
    return str(item[name]["S"])


def number(item: Item, name: str) -> int:
    return int(item[name]["N"])


def optional_number(item: Item, name: str) -> int | None:
    return number(item, name) if name in item else None


def encode_time(value: datetime) -> str:
    """Fixed-width UTC text (``2026-01-01T00:00:00.000000Z``): sorts as time does."""
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def decode_time(value: str) -> datetime:
    """The aware UTC datetime ``encode_time`` wrote."""
    return datetime.fromisoformat(value).astimezone(UTC)


# --- keys ---------------------------------------------------------------------------------


def scope_pk(scope: Scope) -> str:
    return f"R#{scope}"


def head_sk(record_id: str) -> str:
    return f"H#{record_id}"


def version_sk(record_id: str, version: int) -> str:
    return f"V#{record_id}#{version:010d}"


def record_versions_prefix(record_id: str) -> str:
    return f"V#{record_id}#"


def heads_after(record_id: str) -> str:
    """Lowest head key after ``record_id``'s: ``!`` sorts below every record id character."""
    return f"H#{record_id}!"


def versions_after(record_id: str) -> str:
    """Lowest version key after all of ``record_id``'s: ``$`` sorts between ``#`` and ids."""
    return f"V#{record_id}$"


def journal_sk(journal_id: str) -> str:
    return f"J#{journal_id}"


def key(pk: str, sk: str) -> Item:
    return {"pk": s(pk), "sk": s(sk)}


def record_id_of(sort_key: str) -> str | None:
    """The record id a head or version key names; ``None`` for any other item."""
    kind, _, rest = sort_key.partition("#")
    if kind == "H":
        return rest
    if kind == "V":
        return rest.rpartition("#")[0]
    return None


def version_of(sort_key: str) -> int | None:
    """The version number a version key names; ``None`` for any other item."""
    kind, _, rest = sort_key.partition("#")
    return int(rest.rpartition("#")[2]) if kind == "V" else None


def events_pk(scope: Scope, session_id: str) -> str:
    return f"E#{scope}|{session_id}"


def event_sk(event: Event) -> str:
    return f"{encode_time(event.event_timestamp)}#{event.event_id}"


def sessions_pk(scope: Scope) -> str:
    return f"S#{scope}"


def history_pk(scope: Scope) -> str:
    """The events table's partition of the scope's history generation item."""
    return f"HG#{scope}"


def actors_pk(memory_id: str) -> str:
    return f"A#{memory_id}"


# --- records ------------------------------------------------------------------------------


def encode_vector(values: Sequence[float]) -> bytes:
    return np.asarray(values, dtype=_FLOAT32_LE).tobytes()


def decode_vector(blob: bytes, dims: int) -> npt.NDArray[np.float32]:
    """A fresh native float32 array of ``dims`` values read from ``blob``."""
    values = np.frombuffer(blob, dtype=_FLOAT32_LE)
    if values.shape != (dims,):
        raise ConfigurationError(
            f"a stored vector has {values.size} values where {dims} were recorded; the item "
            "was written by something other than cairn, restore it from a backup"
        )
    return values.astype(np.float32)


def version_item(
    pk: str, version: RecordVersion, *, vector: bytes | None, vector_source: int | None
) -> Item:
    """A version item; ``vec`` holds float32 bytes only in the version that brought them,
    later versions with the same words point there through ``vs`` (vector source)."""
    item: Item = {
        **key(pk, version_sk(version.record_id, version.version)),
        "d": s(version.model_dump_json()),
        "v": n(version.version),
        "st": s(version.status.value),
        "ns": s(version.namespace),
        "ca": s(encode_time(version.created_at)),
    }
    if version.embedding is not None and vector_source is not None:
        item["ek"] = s(version.embedding.key)
        item["vs"] = n(vector_source)
    if vector is not None:
        item["vec"] = {"B": vector}
    return item


def head_item(pk: str, version: RecordVersion, *, vector_source: int | None) -> Item:
    """The head item: the current version's JSON, and ``lpk``/``lsk`` while it is active."""
    item: Item = {
        **key(pk, head_sk(version.record_id)),
        "d": s(version.model_dump_json()),
        "v": n(version.version),
        "st": s(version.status.value),
        "ns": s(version.namespace),
    }
    if version.embedding is not None and vector_source is not None:
        item["vs"] = n(vector_source)
    if version.status is Status.ACTIVE:
        item["lpk"] = s(pk)
        item["lsk"] = s(version.record_id)
    return item


def decode_version(item: Item) -> RecordVersion:
    """The version an item holds; ``CorruptRecordError`` if it fails its own checks."""
    return read_version(text(item, "d"))


# --- events and journal -------------------------------------------------------------------


def event_item(scope: Scope, event: Event) -> Item:
    item: Item = {
        **key(events_pk(scope, event.session_id), event_sk(event)),
        "eid": s(event.event_id),
        "ca": s(encode_time(event.created_at)),
        "d": s(event.model_dump_json()),
    }
    if event.branch is not None:
        item["br"] = s(event.branch.name)
    return item


def decode_event(item: Item) -> Event:
    return Event.model_validate_json(text(item, "d"))


def journal_item(entry: JournalEntry) -> Item:
    return {
        **key(scope_pk(entry.scope), journal_sk(entry.journal_id)),
        "d": s(entry.model_dump_json()),
    }


def decode_journal(item: Item) -> JournalEntry:
    return JournalEntry.model_validate_json(text(item, "d"))


# --- size ---------------------------------------------------------------------------------


def _value_size(value: dict[str, Any]) -> int:
    ((kind, raw),) = value.items()
    if kind == "S":
        return len(str(raw).encode("utf-8"))
    if kind == "B":
        return len(raw)
    return len(str(raw))  # N: a little over DynamoDB's count, which is all we need


def item_size(item: Item) -> int:
    """Bytes DynamoDB counts for ``item`` (names plus values), rounded up a little."""
    return sum(len(name.encode("utf-8")) + _value_size(value) for name, value in item.items())


def check_item_size(item: Item, what: str, remedy: str) -> int:
    """Refuse an item DynamoDB would refuse, before anything is sent; returns its size."""
    size = item_size(item)
    if size > MAX_ITEM_BYTES:
        raise InvalidInputError(
            f"{what} encodes to {size} bytes and a DynamoDB item holds at most "
            f"{MAX_ITEM_BYTES} bytes; {remedy}"
        )
    return size
