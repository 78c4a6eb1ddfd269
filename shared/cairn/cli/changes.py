"""``cairn changes``: the embedded store's record change feed, from a cursor, optionally followed.

One line per committed record write (``cairn.ports.RecordChange``): its sequence, what
happened (created, updated, deleted, erased), whose record, which version, when. Never content:
``cairn history RECORD_ID`` shows a version. ``--follow`` keeps reading new changes until
Ctrl-C, which stops it cleanly (exit 0); ``--after N`` resumes after the last sequence seen.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from cairn.cli.args import CliParser

DEFAULT_INTERVAL = 0.5
_PAGE = 500


def add_changes_command(commands: argparse._SubParsersAction[CliParser], store_help: str) -> None:
    summary = "list the store's record changes in commit order (--follow: keep listing new ones)"
    sub = commands.add_parser("changes", help=summary, description=summary)
    sub.set_defaults(run=changes)
    sub.add_argument("--store", type=Path, default=argparse.SUPPRESS, help=store_help)
    sub.add_argument(
        "--memory", default=argparse.SUPPRESS, help="only this memory's changes (default: all)"
    )
    sub.add_argument(
        "--after", type=int, default=0, metavar="N", help="only changes after sequence N"
    )
    sub.add_argument("--follow", action="store_true", help="keep listing new changes until Ctrl-C")
    sub.add_argument(
        "--interval",
        type=float,
        default=DEFAULT_INTERVAL,
        metavar="SECONDS",
        help="how often --follow looks for new changes (default: %(default)s)",
    )
    sub.add_argument("--json", action="store_true", help="one JSON object per line")


def changes(args: argparse.Namespace) -> int:
    # Imported when it runs, so `cairn --help` stays light.
    from cairn.clock import SystemClock
    from cairn.errors import ConfigurationError
    from cairn.local.store import open_store
    from cairn.ports import StoreChangeFeed

    if args.after < 0 or not 0.05 <= args.interval <= 3600:
        raise ConfigurationError("--after must be 0 or more and --interval 0.05-3600 seconds")
    stores = open_store(args.store, SystemClock(), create=False)
    try:
        feed = stores.changes
        if not isinstance(feed, StoreChangeFeed):
            raise ConfigurationError("this store keeps no store-wide change feed")
        cursor = args.after
        memory = getattr(args, "memory", None)
        try:
            while True:
                page = feed.changes_after(cursor, limit=_PAGE, memory_id=memory)
                for change in page:
                    print(_line(change, as_json=args.json), flush=True)
                    cursor = change.sequence
                if len(page) == _PAGE:
                    continue
                if not args.follow:
                    return 0
                time.sleep(args.interval)
        except KeyboardInterrupt:
            print("cairn changes: stopped", file=sys.stderr)
            return 0
    finally:
        stores.close()


def _line(change: object, *, as_json: bool) -> str:
    from cairn.ports import RecordChange

    assert isinstance(change, RecordChange)
    if as_json:
        return json.dumps(change.model_dump(mode="json"), sort_keys=True)
    return (
        f"{change.sequence}\t{change.kind}\t{change.memory_id}\t{change.actor_id}\t"
        f"{change.record_id}\tv{change.version}\t{change.at.isoformat()}"
    )
