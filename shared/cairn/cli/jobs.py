"""``cairn jobs``: the background jobs of a memory, their switches and their last runs.

    cairn jobs [--memory M]                      list every job: on/off, what it does, last run
    cairn jobs run JOB [--memory M]              run one now on the embedded store (offline
                                                 model; link, reflection: the ONNX embedder)
    cairn jobs enable|disable JOB [--memory M]   JOB: rollup, link, access, decay, evolution,
                                                 reflection

A run prints its log entry: counts and reasons, never memory content.
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
    from cairn.jobs import JobName, JobRun
    from cairn.ports import JobLog, Stores

RUNS_SHOWN = 3
# cairn.jobs.JobName's values, copied so `cairn --help` loads no pydantic
# (tests/unit/test_cli_startup.py checks the copy).
JOB_NAMES = ("rollup", "link", "access", "decay", "evolution", "reflection")


def add_jobs_command(commands: argparse._SubParsersAction[CliParser], store_help: str) -> None:
    summary = "list the background jobs of a memory, switch them, or run one now"
    sub = commands.add_parser("jobs", help=summary, description=summary)
    sub.set_defaults(run=jobs)
    sub.add_argument(
        "action", nargs="?", choices=["list", "run", "enable", "disable"], default="list"
    )
    sub.add_argument("job", nargs="?", choices=JOB_NAMES)
    sub.add_argument(
        "--memory",
        default=argparse.SUPPRESS,
        help=f"the memory resource id (env CAIRN_MEMORY; default: {DEFAULT_MEMORY})",
    )
    sub.add_argument("--store", type=Path, default=argparse.SUPPRESS, help=store_help)


def jobs(args: argparse.Namespace) -> int:
    from cairn.jobs import JobName
    from cairn.local.store import open_store

    memory_id = args.memory or os.environ.get("CAIRN_MEMORY") or DEFAULT_MEMORY
    if args.action != "list" and args.job is None:
        raise UsageError(f"name the job to {args.action}: `cairn jobs {args.action} rollup`")
    clock = SystemClock()
    stores = open_store(args.store, clock, create=args.action != "list")
    try:
        log = stores.jobs
        if log is None:  # unreachable for the embedded store, which keeps one
            raise UsageError("this store keeps no job log")
        if args.action == "run":
            print(_run_line(_run(JobName(args.job), stores, memory_id, clock)))
        elif args.action in {"enable", "disable"}:
            job = JobName(args.job)
            log.set_switches(log.switches(memory_id).switched(job, args.action == "enable"))
            print(f"{job.value}: {'on' if args.action == 'enable' else 'off'} for {memory_id}")
        else:
            _list(log, memory_id)
    finally:
        stores.close()
    return 0


def _run(job: JobName, stores: Stores, memory_id: str, clock: SystemClock) -> JobRun:
    from cairn.jobs import JobName

    if job is JobName.ACCESS:
        from cairn.history.access import run_access_job

        return run_access_job(stores, memory_id, clock=clock)
    if job is JobName.DECAY:
        from cairn.history.decay import run_decay_job

        return run_decay_job(stores, memory_id, clock=clock)
    from cairn.local import offline_model

    if job is JobName.EVOLUTION:
        from cairn.history.evolution import run_evolution_job

        return run_evolution_job(stores, offline_model(), memory_id, clock=clock)
    if job is JobName.LINK:
        from cairn.embed.onnx import OnnxEmbedder
        from cairn.history.linking import run_link_job

        embedder = OnnxEmbedder().identity
        return run_link_job(stores, offline_model(), memory_id, embedder=embedder, clock=clock)
    if job is JobName.REFLECTION:
        from cairn.embed.onnx import OnnxEmbedder
        from cairn.history.reflection import run_reflection_job

        return run_reflection_job(
            stores, offline_model(), memory_id, embedder=OnnxEmbedder(), clock=clock
        )
    from cairn.history.job import run_rollup_job

    return run_rollup_job(stores, offline_model(), memory_id, clock=clock)


def _list(log: JobLog, memory_id: str) -> None:
    from cairn.jobs import JOB_SUMMARIES, JobName

    switches = log.switches(memory_id)
    print(f"jobs of memory {memory_id}:")
    for job in JobName:
        state = "on" if switches.is_on(job) else "off"
        default = "" if job in switches.enabled else " (default)"
        print(f"- {job.value}: {state}{default}: {JOB_SUMMARIES[job]}")
        runs = log.runs(memory_id, job, limit=RUNS_SHOWN)
        if not runs:
            print("    never run")
        for run in runs:
            print(f"    {_run_line(run)}")


def _run_line(run: JobRun) -> str:
    took = (run.finished_at - run.started_at).total_seconds()
    line = (
        f"{run.started_at:%Y-%m-%d %H:%M:%S} UTC {run.job.value} {run.outcome}: "
        f"{run.actors} actor(s), {run.changed} change(s), {took:.1f} s"
    )
    if run.reasons:
        line += " — " + "; ".join(run.reasons)
    return line
