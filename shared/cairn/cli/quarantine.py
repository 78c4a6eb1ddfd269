"""``cairn quarantine``: mark a source as compromised, so what came from it reads as untrusted.

    cairn quarantine add kind:tool --reason "the weather plugin was hijacked" [--memory M]
    cairn quarantine list [--memory M]
    cairn quarantine remove rollout:rol-0190... [--memory M]
    cairn quarantine add kind:tool --stack cairn [--region R]   # the deployed stack's table

A source is ``FIELD:VALUE`` (``cairn.quarantine.SelectorField``: kind, speaker, rollout, run,
session, event, speaker_id). Nothing stored is rewritten: recall, replay's labels, ``history`` and
``as-of`` relabel at read time, and removing the entry restores the stored labels.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from cairn.cli.args import DEFAULT_MEMORY, CliParser
from cairn.cli.errors import UsageError
from cairn.clock import SystemClock

if TYPE_CHECKING:
    from cairn.ports import QuarantineList
    from cairn.quarantine import SourceSelector

# cairn.quarantine.SelectorField's values, copied so `cairn --help` loads no pydantic.
SELECTOR_FIELDS = ("kind", "speaker", "rollout", "run", "session", "event", "speaker_id")


def add_quarantine_command(
    commands: argparse._SubParsersAction[CliParser], store_help: str
) -> None:
    summary = "mark a source (a tool, a rollout, a run...) as compromised, list or unmark"
    sub = commands.add_parser("quarantine", help=summary, description=summary)
    sub.set_defaults(run=quarantine)
    sub.add_argument("action", choices=["add", "list", "remove"])
    sub.add_argument(
        "source", nargs="?", help=f"FIELD:VALUE, FIELD one of {', '.join(SELECTOR_FIELDS)}"
    )
    sub.add_argument("--reason", default="", help="why (an operator's note, at most 500 chars)")
    sub.add_argument(
        "--memory",
        default=argparse.SUPPRESS,
        help=f"the memory resource id (env CAIRN_MEMORY; default: {DEFAULT_MEMORY})",
    )
    sub.add_argument("--store", type=Path, default=argparse.SUPPRESS, help=store_help)
    sub.add_argument("--stack", help="the deployed stack: its outputs name the items table")
    sub.add_argument("--items-table", help="the deployed items table (instead of --stack)")
    sub.add_argument("--region", help="the stack's region (default: as the AWS CLI finds it)")


def quarantine(args: argparse.Namespace) -> int:
    from cairn.local.store import open_store
    from cairn.quarantine import parse_selector

    memory_id = getattr(args, "memory", None) or os.environ.get("CAIRN_MEMORY") or DEFAULT_MEMORY
    if args.action != "list" and args.source is None:
        raise UsageError(f"name the source: `cairn quarantine {args.action} kind:tool`")
    try:
        selector = parse_selector(args.source) if args.source else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    clock = SystemClock()
    if args.stack is not None or args.items_table is not None:
        _run(args, _deployed(args), memory_id, selector, clock)
        return 0
    stores = open_store(args.store, clock, create=args.action == "add")
    try:
        if stores.quarantine is None:  # unreachable for the embedded store, which keeps one
            raise UsageError("this store keeps no quarantine list")
        _run(args, stores.quarantine, memory_id, selector, clock)
    finally:
        stores.close()
    return 0


def _deployed(args: argparse.Namespace) -> QuarantineList:
    """The deployed stack's list, in its items table (the stack's outputs name it)."""
    from cairn.aws.stack_outputs import stack_outputs
    from cairn.aws.stack_tables import open_dynamodb
    from cairn.store.dynamodb.client import DynamoDBClient
    from cairn.store.dynamodb.quarantine import DynamoDBQuarantineList

    dynamodb, cloudformation = open_dynamodb(args.region)
    table = args.items_table
    if table is None:
        outputs = stack_outputs(cloudformation, args.stack, otherwise="--items-table")
        if "ItemsTableName" not in outputs:
            raise UsageError(f"stack {args.stack!r} has no ItemsTableName output")
        table = outputs["ItemsTableName"]
    return DynamoDBQuarantineList(DynamoDBClient(dynamodb), table)


def _run(
    args: argparse.Namespace,
    listed: QuarantineList,
    memory_id: str,
    selector: SourceSelector | None,
    clock: SystemClock,
) -> None:
    from cairn.quarantine import QuarantineEntry

    if args.action == "add" and selector is not None:
        entry = QuarantineEntry(
            memory_id=memory_id, selector=selector, reason=args.reason, added_at=clock.now()
        )
        added = listed.add(entry)
        state = "quarantined" if added else "already quarantined (kept as it was)"
        print(f"{selector}: {state} in memory {memory_id}")
    elif args.action == "remove" and selector is not None:
        removed = listed.remove(memory_id, selector)
        state = "no longer quarantined" if removed else "was not quarantined"
        print(f"{selector}: {state} in memory {memory_id}")
    else:
        entries = listed.entries(memory_id)
        print(f"{len(entries)} quarantined source(s) in memory {memory_id}")
        for held in entries:
            note = f" — {held.reason}" if held.reason else ""
            print(f"- {held.selector}  since {held.added_at:%Y-%m-%d %H:%M:%S} UTC{note}")
