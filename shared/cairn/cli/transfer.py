"""``cairn export`` and ``cairn import``: records out as JSON Lines, records in from three formats.

``export`` writes one line per record, ``{"format": "cairn.export/2", "section": "record",
"memory_id", "actor_id", "record_id", "versions": [...]}``, every version as stored (content,
sources, trust, status, links, digests, times; erased records as their tombstones), oldest
first, the lines in record id order: the whole history and its provenance. Vectors are left
out (any embedder re-derives them). After each actor's records come its links and access
counts (``cairn.cli.export_file``). Without ``--actor`` it exports every actor of ``--memory``.
History (turns and chunks) is not exported.

``import FILE`` files records into ``--actor``'s memory:

- ``--format cairn`` (an export): a record of the scope it is imported into (same memory and
  actor) is restored as it was, every version and tombstone (``cairn.cli.import_restore``); a record
  of another scope is copied, its current content as a new record carrying its original
  sources (so its trust is what it was, never more), category, confidence, tags and metadata,
  plus ``imported_from`` (the original id; retracted, superseded and erased ones are not
  revived, since their ids and histories belong to the scope they came from); the links and
  access counts of the scope restored into are restored with its records
  (``cairn.cli.import_sections``), those of other scopes are not carried;
- ``--format agentcore``: a ListMemoryRecords or RetrieveMemoryRecords response (JSON), or its
  ``memoryRecordSummaries`` one per line; source ``import``;
- ``--format mem0``: mem0's ``get_all()`` output (``{"results": [...]}`` or a list), one
  ``memory`` each; source ``import``.

A record the scope holds already (the same history, or for a copy the same text in the same
namespace) is skipped, not counted again, so importing a file twice changes nothing the second
time. A malformed file, or one that collides with what the store holds, is refused before
anything is written, naming the line or the record.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cairn.cli.args import CliParser
from cairn.cli.errors import UsageError

if TYPE_CHECKING:
    from cairn.changes import NewRecord
    from cairn.models import RecordVersion, Scope
    from cairn.ports import Embedder, Stores

FORMATS = ("cairn", "agentcore", "mem0")


def add_transfer_commands(
    commands: argparse._SubParsersAction[CliParser], parents: Sequence[CliParser]
) -> None:
    summary = "write records with their whole history and provenance as JSON Lines"
    sub = commands.add_parser("export", help=summary, description=summary, parents=list(parents))
    sub.set_defaults(run=run_export)
    sub.add_argument("--output", type=Path, help="write to this file instead of stdout")

    summary = "file records from a cairn export, an AgentCore ListMemoryRecords answer or mem0"
    sub = commands.add_parser("import", help=summary, description=summary, parents=list(parents))
    sub.set_defaults(run=run_import)
    sub.add_argument("file", type=Path, metavar="FILE", help="the file to read (- for stdin)")
    sub.add_argument("--format", choices=FORMATS, default="cairn", help="default: %(default)s")


def run_export(args: argparse.Namespace) -> int:
    """One JSON line per record of the actor (or of every actor of the memory), then per link
    and per counted record."""
    from cairn.cli.export_file import scope_lines
    from cairn.cli.inventory import open_existing
    from cairn.models import Scope

    with open_existing(args.store) as backend:
        actors = (
            [args.actor]
            if args.actor is not None
            else sorted({c.actor_id for c in backend.inventory(args.memory)})
        )
        stores = backend.stores()
        lines = [
            line
            for actor in actors
            for scope in [Scope(memory_id=args.memory, actor_id=actor)]
            for line in scope_lines(stores, scope, backend.erased_records(scope))
        ]
    records = sum(line["section"] == "record" for line in lines)
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
        carried = len(lines) - records
        print(
            f"exported {records} record(s) and {carried} link or access line(s) to {args.output}",
            file=sys.stderr,
        )
    return 0


def _lines(path: Path) -> list[str]:
    text = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
    return text.splitlines()


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{where} is not JSON ({exc.msg}); check --format") from exc


def _copied(histories: Sequence[tuple[RecordVersion, ...]], scope: Scope) -> list[NewRecord]:
    """The live heads of records of other scopes, as new records of ``scope``."""
    from cairn.changes import NewRecord
    from cairn.local.store import default_namespace
    from cairn.models import RecordFields, Status

    found: list[NewRecord] = []
    for history in histories:
        head = history[-1]
        if head.status is not Status.ACTIVE:
            continue
        fields = head.model_dump(include=set(RecordFields.model_fields), exclude={"edges"})
        if head.actor_id != scope.actor_id:
            fields["namespace"] = default_namespace(head.category, scope.actor_id)
        metadata = dict(head.metadata)
        if len(metadata) < 20:
            metadata["imported_from"] = head.record_id
        found.append(NewRecord(**{**fields, "metadata": metadata}))
    return found


def _summaries(lines: list[str]) -> list[Any]:
    """The summaries of a whole ListMemoryRecords answer, or one summary per line."""
    try:
        answer = json.loads("\n".join(lines))
    except json.JSONDecodeError:
        answer = None
    if isinstance(answer, dict) and isinstance(answer.get("memoryRecordSummaries"), list):
        return list(answer["memoryRecordSummaries"])
    return [_json(line, f"line {n}") for n, line in enumerate(lines, start=1) if line.strip()]


def _imported(text: Any, where: str, namespace: str, category: str = "fact") -> NewRecord:
    from cairn.changes import NewRecord
    from cairn.local.memory import DEFAULT_CONFIDENCE
    from cairn.models import Source, SourceKind

    if not isinstance(text, str) or not text.strip():
        raise UsageError(f"{where} has no text to import; check --format")
    return NewRecord(
        namespace=namespace,
        category=category,
        content=text.strip(),
        confidence=DEFAULT_CONFIDENCE[SourceKind.IMPORT],
        sources=(Source(kind=SourceKind.IMPORT),),
    )


def _agentcore_records(lines: list[str], scope: Scope) -> list[NewRecord]:
    from cairn.local.store import default_namespace

    found = []
    for number, summary in enumerate(_summaries(lines), start=1):
        where = f"record {number}"
        content = summary.get("content") if isinstance(summary, dict) else None
        text = content.get("text") if isinstance(content, dict) else None
        found.append(_imported(text, where, default_namespace("fact", scope.actor_id)))
    return found


def _mem0_records(lines: list[str], scope: Scope) -> list[NewRecord]:
    from cairn.local.store import default_namespace

    answer = _json("\n".join(lines), "the file")
    items = answer.get("results") if isinstance(answer, dict) else answer
    if not isinstance(items, list):
        raise UsageError('a mem0 export is {"results": [...]} or a list; check --format')
    found = []
    for number, item in enumerate(items, start=1):
        text = item.get("memory") if isinstance(item, dict) else None
        found.append(_imported(text, f"memory {number}", default_namespace("fact", scope.actor_id)))
    return found


def run_import(args: argparse.Namespace) -> int:
    """File the file's records into the actor's memory; print how many, and how many skipped."""
    from cairn.cli.export_file import read_export
    from cairn.cli.import_restore import check_histories, restore_histories
    from cairn.cli.import_sections import Sections, check_held, own_sections, restore_sections
    from cairn.cli.opening import opened, scope_of
    from cairn.embed.onnx import OnnxEmbedder

    if args.actor is None:
        raise UsageError("`cairn import` files records into one actor's memory: pass --actor ID")
    scope = scope_of(args)
    own: list[tuple[RecordVersion, ...]] = []
    sections = Sections()
    if args.format == "cairn":  # all read and checked before any write
        read = read_export(_lines(args.file))
        own = [h for h in read.histories if h[0].scope == scope]
        check_histories(own, scope)
        sections = own_sections(read, scope)
        records = _copied([h for h in read.histories if h[0].scope != scope], scope)
    else:
        reader = {"agentcore": _agentcore_records, "mem0": _mem0_records}
        records = reader[args.format](_lines(args.file), scope)
    embedder = OnnxEmbedder()
    with opened(args, create=True) as ctx:
        check_held(ctx.stores, ctx.scope, sections)
        restored = restore_histories(ctx.stores, ctx.scope, own, embedder)
        copied = _file_copies(ctx.stores, ctx.scope, records, embedder)
        carried = restore_sections(ctx.stores, ctx.scope, sections)
    left = f"; {sections.others} link or access line(s) of other actors not carried"
    print(
        f"imported {restored.restored + copied} record(s) into {ctx.scope.actor_id!r}; "
        f"{restored.held + len(records) - copied} already held, skipped; {carried.links} "
        f"link(s), {carried.counts} access count(s) and {carried.salience} salience value(s) "
        f"restored{left if sections.others else ''}"
    )
    return 0


def _file_copies(stores: Stores, scope: Scope, records: list[NewRecord], embedder: Embedder) -> int:
    """File the records whose text the scope does not hold in their namespace; how many."""
    from cairn.changes import MAX_CHANGES_PER_APPLY, Create
    from cairn.cli.progress import counted, embed_with_progress
    from cairn.local.store import all_records
    from cairn.models import content_digest

    held = {(h.namespace, h.content_digest) for h in all_records(stores, scope)}
    fresh = []
    for record in records:
        key = (record.namespace, content_digest(record.content))
        if key not in held:
            held.add(key)
            fresh.append(record)
    embedded = embed_with_progress(embedder, fresh)
    starts = range(0, len(embedded), MAX_CHANGES_PER_APPLY)
    for start in counted(starts, label="filing", unit="batch"):
        batch = embedded[start : start + MAX_CHANGES_PER_APPLY]
        stores.records.apply(scope, [Create(record=record) for record in batch])
    return len(fresh)
