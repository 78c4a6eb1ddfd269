"""The scheduled sweep: what no append will do by itself, finished on a timer.

One pass (``sweep``), run on AWS when a wake-up armed for something due fires (and hourly, as
a safety net) and by the embedded worker's timer on a laptop:

1. claim a rollout for every session idle past its timeout with messages pending, and release
   it (stage and announce);
2. finish every rollout that stalled before its announcement (claimed or staged for longer than
   ``STALL_AFTER``: the process releasing it crashed or lost the staging store or the topic);
3. announce again every rollout announced ``REDELIVER_AFTER`` ago and still not consumed (its
   message expired or went to the dead-letter queue), at most ``MAX_ANNOUNCEMENTS`` times in
   all, after which it is marked failed with the reason, for an operator to look at.

Every step is idempotent and conditional, so two sweeps running at once, or a sweep racing the
append that claimed a rollout, never stage or announce one twice. A step that fails with a
``CairnError`` is counted and left for the next pass; the pass goes on.

With a ``SweepTimer`` (the deployed stack's; appends arm it, ``cairn.extract.staging``), a pass
ends by arming the next one for the earliest thing still due (``RolloutStore.next_due``), and
arms nothing when nothing waits: an idle deployment runs no sweep until the next append. When
the store cannot say what is due, it arms the next minute, so a lost read strands nothing.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime, timedelta

from cairn.errors import CairnError
from cairn.extract.staging import RolloutPipeline
from cairn.models import Frozen
from cairn.ports import DEFAULT_PAGE_SIZE, SweepTimer
from cairn.rollout.index import MAX_ANNOUNCEMENTS, Rollout, RolloutState

log = logging.getLogger(__name__)

# The stack also runs a pass this often, whatever is armed (infra.components.extraction): a
# wake-up lost (a process dying between its commit and arming) delays a release by this much.
SAFETY_EVERY = timedelta(hours=1)

NEVER_CONSUMED = (
    f"announced {MAX_ANNOUNCEMENTS} times and never consumed; see the dead-letter queue"
)


class SweepReport(Frozen):
    """What one pass did, in counts (the Lambda turns them into metrics)."""

    idle_claimed: int = 0
    released: int = 0
    reannounced: int = 0
    abandoned: int = 0
    errors: int = 0
    armed: int = 0  # 1 when the pass armed the next sweep (something is still due)


def sweep(
    pipeline: RolloutPipeline,
    *,
    now: datetime | None = None,
    limit: int = DEFAULT_PAGE_SIZE,
    timer: SweepTimer | None = None,
) -> SweepReport:
    """One pass over idle sessions and due rollouts, at most ``limit`` of each; then, with a
    timer (``timer``, else the pipeline's), the next pass armed for what is still due."""
    at = now or pipeline.clock.now()
    counts = {"idle_claimed": 0, "released": 0, "reannounced": 0, "abandoned": 0, "errors": 0}
    try:
        claims = pipeline.rollouts.claim_idle(at, limit=limit)
    except CairnError as exc:
        log.warning("idle sweep could not claim sessions (%s); next pass", type(exc).__name__)
        claims, counts["errors"] = (), 1
    counts["idle_claimed"] = len(claims)
    for claim in claims:
        counts[_finish(pipeline, claim, at)] += 1
    try:
        due = pipeline.rollouts.list_due(at, limit=limit)
    except CairnError as exc:
        log.warning("sweep could not list due rollouts (%s); next pass", type(exc).__name__)
        due, counts["errors"] = (), counts["errors"] + 1
    for rollout in due:
        counts[_finish(pipeline, rollout, at)] += 1
    timer = timer or pipeline.timer
    if timer is not None:
        counts["armed"], failed = _rearm(replace(pipeline, timer=timer), at)
        counts["errors"] += failed
    return SweepReport(**counts)


def _rearm(pipeline: RolloutPipeline, now: datetime) -> tuple[int, int]:
    """Arm the next pass for the earliest entry still due (the next minute if the store
    cannot say); (armed, errors)."""
    try:
        wake = pipeline.rollouts.next_due()
        failed = 0
    except CairnError as exc:
        log.warning("sweep could not read what is due (%s); next minute", type(exc).__name__)
        wake, failed = now, 1
    if wake is None:
        return 0, failed
    armed = pipeline.arm_quietly(max(wake, now))
    return int(armed), failed + (not armed)


def _finish(pipeline: RolloutPipeline, rollout: Rollout, now: datetime) -> str:
    """Take one rollout a step further; the name of the count it adds to."""
    try:
        if rollout.state is RolloutState.ANNOUNCED:
            if rollout.announcements >= MAX_ANNOUNCEMENTS:
                pipeline.rollouts.mark(
                    rollout.scope,
                    rollout.rollout_id,
                    RolloutState.FAILED,
                    now=now,
                    reason=NEVER_CONSUMED,
                )
                return "abandoned"
            pipeline.announce(rollout)
            return "reannounced"
        pipeline.release(rollout)
        return "released"
    except CairnError as exc:
        log.warning(
            "sweep left rollout %s for the next pass (%s)", rollout.rollout_id, type(exc).__name__
        )
        return "errors"
