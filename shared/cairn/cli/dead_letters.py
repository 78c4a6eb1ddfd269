"""``cairn dlq list|redrive``: the deployed stack's dead-letter queues, from the command line.

``list`` prints one line per waiting message (ids, kind, receive count, first sent; never the
body), ``redrive`` moves them back to the work queue and prints how many; running it again
never doubles work (``cairn.aws.dead_letters``). docs/operations.md says when to use which.
"""

from __future__ import annotations

import argparse

from cairn.cli.args import CliParser

WORKERS = ("extraction", "consolidation")


def add_dlq_command(commands: argparse._SubParsersAction[CliParser]) -> None:
    summary = "list or redrive the deployed stack's dead-letter queues (AWS)"
    sub = commands.add_parser("dlq", help=summary, description=summary)
    sub.set_defaults(run=dlq)
    sub.add_argument("action", choices=("list", "redrive"))
    sub.add_argument(
        "--queue",
        choices=WORKERS,
        default="extraction",
        help="whose dead letters (default: %(default)s)",
    )
    sub.add_argument("--stack", help="the deployed stack's name: its outputs name the queues")
    sub.add_argument("--dead-letter-url", help="the dead-letter queue's URL (instead of --stack)")
    sub.add_argument("--queue-url", help="the work queue's URL, where redrive sends them")
    sub.add_argument("--region", help="the stack's region (default: as the AWS CLI finds it)")
    sub.add_argument(
        "--limit", type=int, default=None, help="at most this many messages (default: all)"
    )


def dlq(args: argparse.Namespace) -> int:
    # Imported when it runs: boto3 is the aws extra, and `cairn --help` stays light.
    from cairn.aws.dead_letters import open_dead_letters

    queue = open_dead_letters(
        args.queue,
        stack=args.stack,
        dead_letter_url=args.dead_letter_url,
        queue_url=args.queue_url,
        region=args.region,
    )
    if args.action == "redrive":
        moved = queue.redrive(limit=args.limit or 1000)
        print(f"redriven  {moved} messages to {queue.queue_url}")
        return 0
    waiting = queue.waiting(limit=args.limit or 100)
    for letter in waiting:
        rollout = letter.rollout_id or "(not a cairn notice)"
        print(
            f"dead      {letter.message_id} {letter.kind or '-'} {rollout} received "
            f"{letter.receive_count} times, first sent {letter.first_sent_at:%Y-%m-%d %H:%M} UTC"
        )
    print(f"waiting   {len(waiting)} messages in {queue.dead_letter_url}")
    return 0
