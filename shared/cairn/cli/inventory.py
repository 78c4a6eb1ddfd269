"""``cairn ls`` and ``cairn stats``: what the embedded store holds, without a search.

- ``cairn ls actors``: the actors of ``--memory`` that have records, events or journal entries;
- ``cairn ls memories``: the memory ids in the store;
- ``cairn ls records``: the actor's records (heads), filtered by ``--namespace``,
  ``--category`` and ``--status`` (``active`` by default, ``all`` for every status);
- ``cairn stats``: per memory and actor (only ``--actor``'s if given), records by status,
  versions, events, sessions, journal entries, links and the record showings counted by the
  access job, and the size of the file. ``cairn ls records`` shows each record's access count
  (how many recalls showed it, as counted by ``cairn jobs run access``).

None of them writes: no journal entry, no migration of an unknown file.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cairn.cli.args import CliParser
from cairn.cli.errors import UsageError

if TYPE_CHECKING:
    from cairn.store.sqlite import SQLiteBackend
    from cairn.store.sqlite.inventory import ScopeCounts

# Erased records are never listed (their tombstones stay readable through `cairn history`).
STATUSES = ("active", "superseded", "retracted", "all")


def add_inventory_commands(
    commands: argparse._SubParsersAction[CliParser], parents: Sequence[CliParser]
) -> None:
    summary = "list the actors, the memories, or an actor's records (no search, no journal)"
    sub = commands.add_parser("ls", help=summary, description=summary, parents=list(parents))
    sub.set_defaults(run=run_ls)
    sub.add_argument(
        "what",
        choices=["actors", "memories", "records"],
        metavar="WHAT",
        help="actors, memories or records",
    )
    sub.add_argument("--namespace", help="records only: under this namespace prefix")
    sub.add_argument("--category", help="records only: of this category")
    sub.add_argument(
        "--status",
        choices=STATUSES,
        default="active",
        help="records only (default: active); erased records show only in `cairn history`",
    )
    sub.add_argument("--json", action="store_true", help="print one JSON object instead of text")

    summary = "count what the store holds: records by status, versions, events, journal entries"
    sub = commands.add_parser("stats", help=summary, description=summary, parents=list(parents))
    sub.set_defaults(run=run_stats)
    sub.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def open_existing(path: Path) -> SQLiteBackend:
    """The SQLite store at ``path``; an error (and no new file) if there is none."""
    from cairn.errors import ConfigurationError
    from cairn.store.sqlite import SQLiteBackend

    if not path.exists():
        raise ConfigurationError(
            f"no store at {path}: nothing has been remembered there yet; check --store "
            "(or CAIRN_STORE), or write to it first with `cairn remember`"
        )
    return SQLiteBackend(path)


def _records_line(counts: ScopeCounts) -> str:
    by_status = ", ".join(f"{n} {status}" for status, n in sorted(counts.records.items()))
    return (
        f"{by_status or 'no'} record(s) ({counts.versions} version(s)); {counts.events} "
        f"event(s) in {counts.sessions} session(s); {counts.journal_entries} journal entr"
        f"{'y' if counts.journal_entries == 1 else 'ies'}; {counts.links} link(s); "
        f"{counts.access_counted} recall showing(s) counted"
    )


def _counts_json(counts: ScopeCounts) -> dict[str, Any]:
    return {
        "memory_id": counts.memory_id,
        "actor_id": counts.actor_id,
        "records": counts.records,
        "versions": counts.versions,
        "events": counts.events,
        "sessions": counts.sessions,
        "journal_entries": counts.journal_entries,
        "links": counts.links,
        "access_counted": counts.access_counted,
    }


def run_ls(args: argparse.Namespace) -> int:
    """Print one line per actor, memory or record (or one JSON object)."""
    with open_existing(args.store) as backend:
        if args.what == "records":
            return _ls_records(args, backend)
        scopes = backend.inventory(None if args.what == "memories" else args.memory)
    if args.what == "memories":
        memories = sorted({counts.memory_id for counts in scopes})
        if args.json:
            print(json.dumps({"memories": memories}, ensure_ascii=False))
        for memory_id in [] if args.json else memories:
            actors = sum(1 for counts in scopes if counts.memory_id == memory_id)
            print(f"{memory_id}  {actors} actor(s)")
        return 0
    if args.json:
        print(json.dumps({"actors": [_counts_json(c) for c in scopes]}, ensure_ascii=False))
        return 0
    for counts in scopes:
        print(f"{counts.actor_id}  {_records_line(counts)}")
    return 0


def _ls_records(args: argparse.Namespace, backend: SQLiteBackend) -> int:
    from cairn.cli.output import record_line, version_json
    from cairn.cli.progress import listed
    from cairn.models import Scope

    if args.actor is None:
        raise UsageError("`cairn ls records` lists one actor's records: pass --actor ID")
    scope = Scope(memory_id=args.memory, actor_id=args.actor)
    stores = backend.stores()
    if args.status == "active":
        heads = listed(stores, scope, namespace_prefix=args.namespace)
    else:
        heads = listed(stores, scope, namespace_prefix=args.namespace, include_inactive=True)
        if args.status != "all":
            heads = [head for head in heads if head.status.value == args.status]
    if args.category is not None:
        heads = [head for head in heads if head.category == args.category]
    shown = stores.access.counts(scope) if stores.access is not None else {}
    salience = stores.access.salience(scope) if stores.access is not None else {}

    def live(record_id: str) -> float | None:
        measured = salience.get(record_id)
        return None if measured is None else round(measured.value, 3)

    if args.json:
        rows = [
            {
                **version_json(h),
                "access_count": shown.get(h.record_id, 0),
                "salience": live(h.record_id),
            }
            for h in heads
        ]
        print(json.dumps({"records": rows}, ensure_ascii=False))
        return 0
    print(f"{len(heads)} record(s), {args.status}")
    for head in heads:
        value = live(head.record_id)
        decay = "" if value is None else f", salience {value:.3f}"
        count = shown.get(head.record_id, 0)
        print(f"{record_line(head)}  ({head.status.value}, shown {count}×{decay})")
    return 0


def run_stats(args: argparse.Namespace) -> int:
    """Print the counts per memory and actor, and the file's size."""
    with open_existing(args.store) as backend:
        scopes = backend.inventory()
    if args.actor is not None:
        scopes = [c for c in scopes if (c.memory_id, c.actor_id) == (args.memory, args.actor)]
    files = [args.store, *(args.store.with_name(args.store.name + end) for end in ("-wal", "-shm"))]
    size = sum(path.stat().st_size for path in files if path.is_file())
    if args.json:
        print(
            json.dumps(
                {
                    "store": str(args.store),
                    "bytes": size,
                    "scopes": [_counts_json(c) for c in scopes],
                },
                ensure_ascii=False,
            )
        )
        return 0
    memories = len({c.memory_id for c in scopes})
    print(f"store {args.store}: {size:,} bytes; {memories} memory(ies), {len(scopes)} actor(s)")
    for counts in scopes:
        print(f"  {counts.memory_id} / {counts.actor_id}: {_records_line(counts)}")
    return 0
