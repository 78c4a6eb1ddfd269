"""``cairn doctor``: is the embedded store sound, and is any work stuck?

It opens the store read-only (safe beside a running ``cairn serve``) and prints one line per
check: SQLite's integrity check, the rollouts not consumed yet by state, those stuck past twice
the sweep's thresholds, failed ones with their reasons, sessions with counted messages not yet
released, whether the recall index derived from the records agrees with them (and how many live
heads still wait for a vector), and the staging folder's files. Exit status 0 when healthy, 1
when something needs an operator (docs/operations.md says what to do). Nothing printed carries
memory content.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from cairn.cli.args import CliParser
from cairn.clock import SystemClock
from cairn.errors import ConfigurationError

if TYPE_CHECKING:
    from cairn.store.sqlite.health import StoreHealth
    from cairn.store.sqlite.index_health import IndexHealth

HEALTHY, NEEDS_AN_OPERATOR = 0, 1


def add_doctor_command(commands: argparse._SubParsersAction[CliParser], store_help: str) -> None:
    summary = "check the embedded store's integrity and whether any extraction work is stuck"
    sub = commands.add_parser("doctor", help=summary, description=summary)
    sub.set_defaults(run=doctor)
    sub.add_argument("--store", type=Path, default=argparse.SUPPRESS, help=store_help)


def doctor(args: argparse.Namespace) -> int:
    # Imported when it runs, so `cairn --help` stays light.
    from cairn.embed.onnx import DIMS, MODEL_ID
    from cairn.models import EmbedderId
    from cairn.store.sqlite.health import check_store

    path: Path = args.store
    if not path.exists():
        raise ConfigurationError(f"no store at {path}; check --store (or CAIRN_STORE)")
    embedder = EmbedderId(model_id=MODEL_ID, dims=DIMS)  # the one cairn embeds with
    health = check_store(path, SystemClock().now(), embedder.key)
    for line in report(path, health):
        print(line)
    return HEALTHY if health.healthy else NEEDS_AN_OPERATOR


def report(path: Path, health: StoreHealth) -> list[str]:
    """The lines ``cairn doctor`` prints for ``health``."""
    lines = [f"store      {path}: integrity {health.integrity}"]
    by_state = Counter(r.state.value for r in health.unfinished)
    states = ", ".join(f"{n} {state}" for state, n in sorted(by_state.items())) or "none"
    lines.append(f"rollouts   not consumed yet: {states}")
    lines.append(f"sessions   {health.sessions_pending} with messages waiting for a trigger")
    for rollout in health.stuck:
        lines.append(
            f"stuck      {rollout.rollout_id} {rollout.state.value} since "
            f"{rollout.updated_at:%Y-%m-%d %H:%M} UTC: start cairn (serve) on this store to "
            "catch up, or check the extraction model"
        )
    for rollout in health.failed:
        lines.append(f"failed     {rollout.rollout_id}: {rollout.failure or 'no reason recorded'}")
    lines.extend(index_lines(health.index))
    from cairn.local.system import staging_dir

    staged = [p for p in staging_dir(path).rglob("*") if p.is_file()]
    temporary = sum(p.name.endswith(".tmp") for p in staged)
    lines.append(f"staging    {len(staged) - temporary} payloads, {temporary} temporary files")
    lines.append("healthy" if health.healthy else "needs an operator: see docs/operations.md")
    return lines


def index_lines(index: IndexHealth) -> list[str]:
    """The recall index's lines: current or not, and the live heads still without a vector."""
    where = f"{index.scopes} scopes, {index.live_heads} live heads"
    if index.current:
        lines = [f"index      {where}: current (every head agrees with its version and reads)"]
    else:
        lines = [f"index      {where}: NOT current, restore the last backup"]
    if index.mismatched_count:
        named = ", ".join(index.mismatched)
        lines.append(
            f"index      {index.mismatched_count} heads disagree with their version: {named}"
        )
    lines.extend(f"index      cannot read the rows of {scope}" for scope in index.unreadable)
    if index.live_heads:
        lines.append(
            f"vectors    {index.live_heads - index.without_vector} of {index.live_heads} live "
            f"heads embedded; {index.without_vector} scored by keywords until re-embedded"
        )
    if index.configured is not None and index.configured[1]:
        key, missing = index.configured
        lines.append(
            f"vectors    {missing} live heads have no vector of {key}, the embedder recall "
            "uses: run `cairn reindex` (recall re-embeds a few of them a question meanwhile)"
        )
    return lines
