"""``cairn restore-actor``: one actor of the deployed stack back as of a point-in-time restore.

The operator restores both tables into new ones first (``aws dynamodb
restore-table-to-point-in-time``); this copies the actor's items back into the live tables
(``cairn.store.dynamodb.restore``) and prints how many items it wrote and deleted. Every other
actor is untouched; running it again changes nothing (docs/operations.md).
"""

from __future__ import annotations

import argparse

from cairn.cli.args import CliParser


def add_restore_command(
    commands: argparse._SubParsersAction[CliParser], parents: list[CliParser]
) -> None:
    summary = "restore one actor of the deployed stack from point-in-time restored tables (AWS)"
    sub = commands.add_parser("restore-actor", help=summary, description=summary, parents=parents)
    sub.set_defaults(run=restore_actor)
    sub.add_argument("--restored-items", required=True, help="the restored items table")
    sub.add_argument("--restored-events", required=True, help="the restored events table")
    sub.add_argument("--stack", help="the deployed stack: its outputs name the live tables")
    sub.add_argument("--items-table", help="the live items table (instead of --stack)")
    sub.add_argument("--events-table", help="the live events table (instead of --stack)")
    sub.add_argument("--region", help="the stack's region (default: as the AWS CLI finds it)")
    sub.add_argument(
        "--yes", action="store_true", help="confirm: the actor's live memory is replaced"
    )


def restore_actor(args: argparse.Namespace) -> int:
    from cairn.aws.stack_tables import live_tables, open_dynamodb
    from cairn.cli.errors import UsageError
    from cairn.models import Scope
    from cairn.store.dynamodb.client import DynamoDBClient
    from cairn.store.dynamodb.restore import Tables
    from cairn.store.dynamodb.restore import restore_actor as restore

    scope = Scope(memory_id=args.memory, actor_id=args.actor)
    if not args.yes:
        raise UsageError(
            f"restoring {args.actor!r} replaces what its memory holds now with the restored "
            "tables' copy; add --yes to confirm"
        )
    dynamodb, cloudformation = open_dynamodb(args.region)
    items, events = live_tables(
        cloudformation, stack=args.stack, items=args.items_table, events=args.events_table
    )
    report = restore(
        DynamoDBClient(dynamodb),
        scope,
        source=Tables(items=args.restored_items, events=args.restored_events),
        target=Tables(items=items, events=events),
    )
    print(
        f"restored  {scope.actor_id} in {scope.memory_id}: {report.written} items written, "
        f"{report.deleted} deleted"
    )
    return 0
