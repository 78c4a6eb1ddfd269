"""The bodies of the ``cairn`` subcommands: each opens the store, makes one cairn call, prints.

Each command takes the parsed ``argparse.Namespace`` and returns the exit status. Failures are
raised (``CairnError``, pydantic ``ValidationError``, ``UsageError``) and reported as one line
by ``cairn.cli.main``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from cairn.changes import MAX_CHANGES_PER_APPLY, Create, FoldIn, NewRecord, Retract
from cairn.cli.errors import FAILURE_EXIT, UsageError
from cairn.cli.opening import opened, scope_of
from cairn.cli.output import record_line, version_json, version_lines, when
from cairn.cli.progress import embed_with_progress, listed
from cairn.embed.onnx import OnnxEmbedder
from cairn.history.journalled import replay as replay_journal
from cairn.local.memory import DEFAULT_CONFIDENCE, plan_remember
from cairn.local.store import all_records, default_namespace, read_now
from cairn.models import RecordVersion, Source, SourceKind
from cairn.recall import Replay
from cairn.visible_text import neutralised


def facts_of(text: str, stdin: TextIO) -> list[str]:
    """The facts TEXT names: itself (one line), or with ``-`` each non-blank line of stdin,
    repeats dropped; ``UsageError`` for a multi-line TEXT or an empty stdin."""
    if text == "-":
        lines = [line.strip() for line in stdin.read().splitlines()]
        facts = list(dict.fromkeys(line for line in lines if line))
        if not facts:
            raise UsageError("no fact on standard input: `cairn remember -` reads one per line")
        return facts
    if len(text.splitlines()) > 1:
        raise UsageError(
            "TEXT is one fact on one line, and this one has several lines: remember each "
            "fact separately, or pipe them in, one per line, to `cairn remember -`"
        )
    return [text]


def remember(args: argparse.Namespace) -> int:
    """Store each fact as a new record (with its vector), or fold an exact repeat into the
    record that holds it; print the id and version written."""
    scope = scope_of(args)  # a malformed actor is reported as such, not as a bad namespace
    source = SourceKind(args.source)
    confidence = args.confidence if args.confidence is not None else DEFAULT_CONFIDENCE[source]
    namespace = args.namespace or default_namespace(args.category, scope.actor_id)
    records = [
        NewRecord(
            namespace=namespace,
            category=args.category,
            content=fact,
            confidence=confidence,
            tags=tuple(args.tag),
            sources=(Source(kind=source),),
        )
        for fact in facts_of(args.text, sys.stdin)
    ]
    with opened(args, create=True) as ctx:
        heads = all_records(ctx.stores, ctx.scope, namespace_prefix=namespace)
        changes = [plan_remember(heads, record) for record in records]
        created = [change.record for change in changes if isinstance(change, Create)]
        vectors = iter(embed_with_progress(OnnxEmbedder(), created))
        planned = [
            Create(record=next(vectors)) if isinstance(change, Create) else change
            for change in changes
        ]
        written = [
            version
            for start in range(0, len(planned), MAX_CHANGES_PER_APPLY)
            for version in ctx.stores.records.apply(
                ctx.scope, planned[start : start + MAX_CHANGES_PER_APPLY]
            )
        ]
    for change, version in zip(planned, written, strict=True):
        repeat = (
            f" (already held: seen {version.seen_count}x)" if isinstance(change, FoldIn) else ""
        )
        print(
            f"remembered {version.record_id} v{version.version}{repeat}  {version.namespace}  "
            f"[{version.category}, {version.trust.value}]"
        )
    return 0


def history(args: argparse.Namespace) -> int:
    """Print every version of RECORD_ID, oldest first, with sources, trust and links."""
    with opened(args) as ctx:
        versions = read_now(
            ctx.stores, ctx.scope, ctx.stores.records.history(ctx.scope, args.record_id)
        )
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
        held = listed(ctx.stores, ctx.scope, namespace_prefix=args.namespace, as_of=args.time)
        held = list(read_now(ctx.stores, ctx.scope, held))
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
    mismatched = 0
    with opened(args) as ctx:
        for journal_id in args.journal_ids:
            replayed = replay_journal(ctx.scope, journal_id, stores=ctx.stores)
            at = when(replayed.journal.created_at)
            query = neutralised(replayed.journal.query)
            print(f'\njournal {journal_id}: recalled {at} for "{query}"')
            print(replayed.block)
            print(f"replay: {verdict(replayed)}")
            mismatched += not replayed.matches
    if mismatched:
        print(
            f"cairn: error: {mismatched} of {len(args.journal_ids)} replay(s) do not match what "
            "was recalled; see the reasons above",
            file=sys.stderr,
        )
        return FAILURE_EXIT
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
