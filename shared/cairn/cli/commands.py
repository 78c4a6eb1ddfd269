"""The bodies of the ``cairn`` subcommands: each opens the store, makes one cairn call, prints.

Each command takes the parsed ``argparse.Namespace`` and returns the exit status. Failures are
raised (``CairnError``, pydantic ``ValidationError``, ``UsageError``) and reported as one line
by ``cairn.cli.main``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from cairn.changes import Create, NewRecord, Retract, Vector
from cairn.cli.errors import UsageError
from cairn.cli.output import record_line, version_json, version_lines, when
from cairn.clock import SystemClock
from cairn.embed.onnx import OnnxEmbedder
from cairn.erasure import erase_actor
from cairn.local.store import all_records, default_namespace, open_store
from cairn.models import RecordVersion, Scope, Source, SourceKind
from cairn.ports import Clock, Embedder, Stores
from cairn.recall import RecallQuery, Recollection, Replay
from cairn.recall import recall as recall_block
from cairn.recall import replay as replay_journal
from cairn.visible_text import neutralised

# User-stated outranks inferred (DESIGN §4); recall's confidence multiplier reads these.
DEFAULT_CONFIDENCE = {
    SourceKind.USER: 0.9,
    SourceKind.SYSTEM: 0.9,
    SourceKind.IMPORT: 0.7,
    SourceKind.MODEL: 0.5,
    SourceKind.TOOL: 0.5,
}


@dataclass(frozen=True)
class Context:
    """What one command works with: the caller's scope, the open stores, the clock."""

    scope: Scope
    stores: Stores
    clock: Clock


def scope_of(args: argparse.Namespace) -> Scope:
    """The scope --memory and --actor name; ``ValidationError`` if either id is malformed."""
    return Scope(memory_id=args.memory, actor_id=args.actor)


@contextmanager
def opened(args: argparse.Namespace, *, create: bool = False) -> Iterator[Context]:
    """The context for ``args`` (scope from --memory/--actor, store from --store), closed after."""
    scope = scope_of(args)
    clock = SystemClock()
    stores = open_store(args.store, clock, create=create)
    try:
        yield Context(scope=scope, stores=stores, clock=clock)
    finally:
        stores.close()


def with_vectors(embedder: Embedder, records: Sequence[NewRecord]) -> list[NewRecord]:
    """The records, each carrying the vector of its content, embedded in one batch."""
    if not records:
        return []
    rows = embedder.embed([record.content for record in records])
    return [
        record.model_copy(
            update={
                "vector": Vector(embedder=embedder.identity, values=tuple(float(x) for x in row))
            }
        )
        for record, row in zip(records, rows, strict=True)
    ]


def remember(args: argparse.Namespace) -> int:
    """Store TEXT as a new record (with its vector); print its id and version."""
    scope = scope_of(args)  # a malformed actor is reported as such, not as a bad namespace
    source = SourceKind(args.source)
    confidence = args.confidence if args.confidence is not None else DEFAULT_CONFIDENCE[source]
    record = NewRecord(
        namespace=args.namespace or default_namespace(args.category, scope.actor_id),
        category=args.category,
        content=args.text,
        confidence=confidence,
        tags=tuple(args.tag),
        sources=(Source(kind=source),),
    )
    (record,) = with_vectors(OnnxEmbedder(), [record])
    with opened(args, create=True) as ctx:
        (written,) = ctx.stores.records.apply(ctx.scope, [Create(record=record)])
    print(
        f"remembered {written.record_id} v{written.version}  {written.namespace}  "
        f"[{written.category}, {written.trust.value}]"
    )
    return 0


def recall(args: argparse.Namespace) -> int:
    """Print the rendered recall block for QUERY, then the journal id that pins it."""
    query = RecallQuery(text=args.query, namespace_prefix=args.namespace, top_k=args.top_k)
    with opened(args) as ctx:
        found = recall_block(
            ctx.scope, query, stores=ctx.stores, embedder=OnnxEmbedder(), clock=ctx.clock
        )
    if args.json:
        print(json.dumps(recollection_json(found), ensure_ascii=False))
    else:
        print(found.block)
        print(f"journal: {found.journal_id}")
    return 0


def recollection_json(found: Recollection) -> dict[str, Any]:
    """The block, its journal id, each entry (full content, score, trust) and the counts."""
    entries = [
        {
            "record_id": entry.version.record_id,
            "version": entry.version.version,
            "score": entry.score,
            "content": entry.version.content,
            "shown": entry.text,
            "trust": entry.version.trust.value,
            "confidence": entry.version.confidence,
        }
        for entry in found.entries
    ]
    return {
        "block": found.block,
        "journal_id": found.journal_id,
        "entries": entries,
        "counts": dataclasses.asdict(found.counts),
    }


def history(args: argparse.Namespace) -> int:
    """Print every version of RECORD_ID, oldest first, with sources, trust and links."""
    with opened(args) as ctx:
        versions = ctx.stores.records.history(ctx.scope, args.record_id)
    if args.json:
        print(
            json.dumps(
                {"record_id": args.record_id, "versions": _dump(versions)}, ensure_ascii=False
            )
        )
        return 0
    print(f"{args.record_id}: {len(versions)} version(s), oldest first")
    for version in versions:
        print("\n".join(version_lines(version)))
    return 0


def _dump(versions: Sequence[RecordVersion]) -> list[dict[str, Any]]:
    return [version_json(version) for version in versions]


def as_of(args: argparse.Namespace) -> int:
    """Print the records that were active at TIME, as the versions current then."""
    with opened(args) as ctx:
        held = all_records(ctx.stores, ctx.scope, namespace_prefix=args.namespace, as_of=args.time)
    if args.json:
        print(
            json.dumps({"as_of": args.time.isoformat(), "records": _dump(held)}, ensure_ascii=False)
        )
        return 0
    print(f"{len(held)} record(s) active at {args.time.isoformat()}")
    for version in held:
        print(record_line(version))
    return 0


def forget(args: argparse.Namespace) -> int:
    """Retract RECORD_ID softly; say that the content is kept and how to erase it."""
    with opened(args) as ctx:
        (written,) = ctx.stores.records.apply(
            ctx.scope, [Retract(record_id=args.record_id, reason=args.reason)]
        )
    print(
        f"forgot {written.record_id} (now v{written.version}, {written.status.value}): recall "
        "no longer returns it.\nIts content is kept in its history for audit; to destroy it "
        f"for good, run: cairn erase {written.record_id}"
    )
    return 0


def replay(args: argparse.Namespace) -> int:
    """Re-render each journaled recall from its exact versions and say whether it matches."""
    with opened(args) as ctx:
        for journal_id in args.journal_ids:
            replayed = replay_journal(ctx.scope, journal_id, stores=ctx.stores)
            at = when(replayed.journal.created_at)
            query = neutralised(replayed.journal.query)
            print(f'\njournal {journal_id}: recalled {at} for "{query}"')
            print(replayed.block)
            print(f"replay: {verdict(replayed)}")
    return 0


def verdict(replayed: Replay) -> str:
    """Whether the re-rendered block is byte-identical to the journaled one, and if not, why."""
    if replayed.matches:
        return f"matches the journaled block (sha256 {replayed.block_digest[:16]}…)"
    reasons = [
        f"{label}: {', '.join(ids)}"
        for label, ids in (
            ("erased since", replayed.erased),
            ("missing", replayed.missing),
        )
        if ids
    ]
    return (
        "does NOT match the journaled block (" + ("; ".join(reasons) or "rendering differs") + ")"
    )


def erase(args: argparse.Namespace) -> int:
    """Destroy one record's lineage, or (``--all-of-actor --yes``) everything of the actor."""
    if args.all_of_actor == (args.record_id is not None):
        raise UsageError(
            "name exactly one thing to erase: a RECORD_ID, or --all-of-actor; "
            "see `cairn erase --help`"
        )
    if args.all_of_actor and not args.yes:
        raise UsageError(
            f"erasing every record, event, journal entry and staged rollout of actor "
            f"{args.actor!r} cannot be undone; add --yes to confirm"
        )
    with opened(args) as ctx:
        if args.record_id is not None:
            report = ctx.stores.records.erase(ctx.scope, args.record_id)
            print(
                f"erased {report.versions} version(s) of {len(report.record_ids)} record(s): "
                + ", ".join(report.record_ids)
            )
        else:
            from cairn.local import FilesystemStagingStore, staging_dir

            # Staged rollouts hold conversation text: they go too (cairn.erasure.erase_actor).
            staging = FilesystemStagingStore(staging_dir(args.store))
            erased = erase_actor(ctx.stores, ctx.scope, staging=staging)
            report, journal = erased.records, erased.journal_entries
            print(
                f"erased actor {args.actor!r}: {report.versions} version(s) of "
                f"{len(report.record_ids)} record(s), {erased.events} event(s), "
                f"{journal} journal entr{'y' if journal == 1 else 'ies'}, "
                f"{erased.rollouts} rollout index entr{'y' if erased.rollouts == 1 else 'ies'}, "
                f"{erased.payloads} staged payload(s), {erased.chunks} history chunk(s)"
            )
    print("Tombstones keep ids and content digests so audits still add up; the content is gone.")
    return 0
