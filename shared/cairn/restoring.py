"""Restoring a record's history as it was: the checks every backend's ``restore`` runs first.

A restore (``RecordStore.restore``, what ``cairn import --format cairn`` calls) writes one
record's versions exactly as an export holds them: ids, numbers, sources, trust, status, links,
times, tombstones. Nothing is planned anew, so the checks are what keep a restore from
writing a history cairn itself could not have written (``check_history``):

- one record of the target scope, versions numbered 1, 2, 3, ... oldest first, times never
  going back, every version but the last ``active`` (a change needs a live head), and either
  every version erased (erase tombstones the whole record) or none;
- trust never rises: no trusted version after an untrusted one (``RecordVersion`` itself
  derives each version's trust from its sources, so a label cannot be supplied);
- at most ``MAX_RESTORED_VERSIONS`` versions, so one record is one transaction on every
  backend (DynamoDB's ``TransactWriteItems`` takes 100 items: the versions and the head).

That the scope does not hold the record id yet is checked by the backend, in the same
transaction as the writes (``RecordTakenError``). ``plan_restore`` turns a checked history
into the ``Write``s the backends already persist, each vector beside the first version of the
words it embeds, when that version names the vector's embedder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cairn.changes import Vector
from cairn.errors import InvalidInputError
from cairn.models import RecordVersion, Scope, Status, Trust
from cairn.versioning import Write

MAX_RESTORED_VERSIONS = 96


def check_history(scope: Scope, history: Sequence[RecordVersion]) -> None:
    """Raise ``InvalidInputError`` naming what is wrong unless ``history`` is a whole record's
    history of ``scope`` that cairn could have written; return ``None`` otherwise."""
    if not history:
        raise InvalidInputError("a restore names no versions; pass a record's history")
    rid = history[0].record_id
    if len(history) > MAX_RESTORED_VERSIONS:
        raise InvalidInputError(
            f"record {rid!r} has {len(history)} versions; a restore writes at most "
            f"{MAX_RESTORED_VERSIONS} at once"
        )
    erased = [v.status is Status.ERASED for v in history]
    if any(erased) and not all(erased):
        raise InvalidInputError(
            f"record {rid!r} has erased and unerased versions; erase tombstones every version"
        )
    for expected, version in enumerate(history, start=1):
        _check_version(scope, rid, expected, version, history)


def _check_version(
    scope: Scope, rid: str, expected: int, version: RecordVersion, history: Sequence[RecordVersion]
) -> None:
    if version.scope != scope:
        raise InvalidInputError(
            f"record {rid!r} version {version.version} belongs to another scope "
            f"({version.memory_id}, {version.actor_id}); restore it into its own scope"
        )
    if version.record_id != rid:
        raise InvalidInputError(
            f"a restore writes one record: {version.record_id!r} is not {rid!r}"
        )
    if version.version != expected:
        raise InvalidInputError(
            f"record {rid!r}: expected version {expected}, found {version.version}; "
            "restore the whole history, oldest first"
        )
    if expected == 1:
        return
    before = history[expected - 2]
    if version.created_at < before.created_at:
        raise InvalidInputError(
            f"record {rid!r}: version {expected} is older than version {expected - 1}; "
            "a history's times never go back"
        )
    if before.status not in (Status.ACTIVE, Status.ERASED):
        raise InvalidInputError(
            f"record {rid!r}: version {expected} follows a {before.status.value} version; "
            "only a live record changes"
        )
    if before.trust is Trust.UNTRUSTED and version.trust is Trust.TRUSTED:
        raise InvalidInputError(
            f"record {rid!r}: version {expected} is trusted after an untrusted version; "
            "trust never rises, so cairn did not write this history"
        )


def plan_restore(
    scope: Scope, history: Sequence[RecordVersion], vectors: Mapping[str, Vector]
) -> list[Write]:
    """The writes that restore ``history`` (checked first), with ``vectors`` by content digest."""
    check_history(scope, history)
    writes: list[Write] = []
    stored: set[str] = set()
    for version in history:
        vector = vectors.get(version.content_digest)
        fits = vector is not None and version.embedding == vector.embedder
        first = version.content_digest not in stored and version.status is not Status.ERASED
        if fits and first:
            stored.add(version.content_digest)
        writes.append(
            Write(
                version=version,
                expected_head=version.version - 1 or None,
                vector=vector if fits and first else None,
            )
        )
    return writes
