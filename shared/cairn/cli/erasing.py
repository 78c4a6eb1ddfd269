"""``cairn erase``: destroy content for good, one record's lineage or a whole actor.

Erasing one record follows it into everything that restates it (``cairn.erasure_lineage``):
its successors, the session summaries and exact restatements, pending rollouts and history
chunks holding it, and the turns it came from unless ``--keep-events``.

Erasing what is already erased changes nothing and says so, rather than counting the
tombstones again as if it had destroyed them.
"""

from __future__ import annotations

import argparse

from cairn.cli.errors import UsageError
from cairn.cli.opening import Context, opened
from cairn.erasure import erase_actor
from cairn.erasure_lineage import erase_record
from cairn.models import Status


def already_erased(ctx: Context, record_id: str) -> bool:
    """Whether every version of the record is a tombstone (``RecordNotFoundError`` if absent)."""
    return all(v.status is Status.ERASED for v in ctx.stores.records.history(ctx.scope, record_id))


def erase(args: argparse.Namespace) -> int:
    """Destroy one record's lineage, or (``--all-of-actor --yes``) everything of the actor."""
    if args.all_of_actor == (args.record_id is not None):
        raise UsageError(
            "name exactly one thing to erase: a RECORD_ID, or --all-of-actor; "
            "see `cairn erase --help`"
        )
    if args.all_of_actor and args.keep_events:
        raise UsageError("--keep-events applies to erasing one RECORD_ID, not --all-of-actor")
    if args.all_of_actor and not args.yes:
        raise UsageError(
            f"erasing every record, event, journal entry and staged rollout of actor "
            f"{args.actor!r} cannot be undone; add --yes to confirm"
        )
    with opened(args) as ctx:
        if args.record_id is not None:
            from cairn.local import FilesystemStagingStore, staging_dir

            again = already_erased(ctx, args.record_id)
            one = erase_record(
                ctx.stores,
                ctx.scope,
                args.record_id,
                staging=FilesystemStagingStore(staging_dir(args.store)),
                clock=ctx.clock,
                keep_events=args.keep_events,
            )
            if again and not (one.restating or one.events or one.rollouts or one.chunks):
                # A rerun finishes what a failed erase left; here nothing was left.
                print(
                    f"{args.record_id} was already erased: nothing left to destroy; "
                    f"`cairn history {args.record_id}` shows its tombstones"
                )
                return 0
            print(
                f"erased {one.versions} version(s) of {len(one.record_ids)} record(s): "
                + ", ".join(one.record_ids)
                + f"; {one.events} source turn(s), {one.rollouts} pending rollout(s), "
                f"{one.chunks} history chunk(s)"
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
