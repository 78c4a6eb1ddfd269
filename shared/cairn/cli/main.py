"""The ``cairn`` command: remember, recall, history, as-of, forget, replay, erase, ls, stats,
demo, serve, jobs, quarantine, doctor, backup, dlq, restore-actor, changes, mcp, reindex.

Every failure ends as exactly one line on stderr, ``cairn: error: <what was wrong>; <what to
do>``, with exit status 2 for bad arguments and 1 for everything else; never a traceback, unless
``CAIRN_DEBUG=1`` asks for one. Memory content is printed only as a command's own output and is
never logged.

Building the parser imports no command body: each is imported when it runs (``_lazy``), so
``cairn --help`` and a mistyped command answer without loading pydantic, numpy or the model.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cairn import __version__
from cairn.cli.args import (
    DEFAULT_MEMORY,
    DEFAULT_TOP_K,
    SOURCE_KINDS,
    CliParser,
    default_demo_store,
    parse_instant,
    parse_top_k,
    parse_unit,
    resolve_locations,
)
from cairn.cli.backup import add_backup_command
from cairn.cli.changes import add_changes_command
from cairn.cli.dead_letters import add_dlq_command
from cairn.cli.doctor import add_doctor_command
from cairn.cli.errors import FAILURE_EXIT, explain
from cairn.cli.inventory import add_inventory_commands
from cairn.cli.jobs import add_jobs_command
from cairn.cli.mcp_server import add_mcp_command
from cairn.cli.quarantine import add_quarantine_command
from cairn.cli.reindex import add_reindex_command
from cairn.cli.restore import add_restore_command
from cairn.cli.serve import add_serve_command
from cairn.cli.transfer import add_transfer_commands
from cairn.local.paths import default_store_path

PUBLIC_COMMANDS = (
    "{remember,recall,history,as-of,forget,replay,erase,ls,stats,export,import,"
    "demo,demo-agent,serve,jobs,quarantine,doctor,backup,dlq,restore-actor,changes,mcp,reindex}"
)


def _location_options(parser: argparse.ArgumentParser, *, default: Any) -> None:
    """--actor, --memory and --store; ``cairn.cli.args.resolve_locations`` fills the gaps."""
    where = parser.add_argument_group("whose memory, and where it is stored")
    where.add_argument(
        "--actor",
        default=default,
        help="whose memory it is, e.g. tg:12345 (required; env CAIRN_ACTOR)",
    )
    where.add_argument(
        "--memory",
        default=default,
        help=f"the memory resource id (env CAIRN_MEMORY; default: {DEFAULT_MEMORY})",
    )
    where.add_argument(
        "--store",
        type=Path,
        default=default,
        help=f"the embedded SQLite store (env CAIRN_STORE; default: {default_store_path()})",
    )


def _scope_options() -> CliParser:
    """The location options for every subcommand, so they may also follow its name."""
    options = CliParser(add_help=False)
    # SUPPRESS: an option left out after the command keeps what was given before it.
    _location_options(options, default=argparse.SUPPRESS)
    return options


Command = Callable[[argparse.Namespace], int]


def _lazy(module: str, name: str) -> Command:
    """The command ``module.name``, imported only when it runs."""

    def run(args: argparse.Namespace) -> int:
        command: Command = getattr(importlib.import_module(module), name)
        return command(args)

    return run


def _body(name: str) -> Command:
    return _lazy("cairn.cli.commands", name)


def _add_command(
    commands: argparse._SubParsersAction[CliParser],
    name: str,
    run: Command,
    summary: str,
    parents: Sequence[CliParser] = (),
) -> CliParser:
    sub = commands.add_parser(name, help=summary, description=summary, parents=list(parents))
    sub.set_defaults(run=run)
    return sub


def _add_json(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def _add_memory_commands(commands: argparse._SubParsersAction[CliParser]) -> None:
    scoped = [_scope_options()]
    sub = _add_command(
        commands,
        "remember",
        _body("remember"),
        "remember a fact as a new record (an exact repeat folds into the record that holds "
        "it); prints its id and version",
        scoped,
    )
    sub.add_argument(
        "text", metavar="TEXT", help="the fact, one line; - reads one fact per line from stdin"
    )
    sub.add_argument(
        "--namespace",
        help="default: /preferences/<actor>/ for --category preference, else /facts/<actor>/",
    )
    sub.add_argument("--category", default="fact", help="open slug: fact, preference, decision…")
    sub.add_argument(
        "--source",
        choices=SOURCE_KINDS,
        default="user",
        help="who said it (default: %(default)s); only user and system sources are trusted",
    )
    sub.add_argument(
        "--confidence",
        type=parse_unit,
        help="0..1; default 0.9 for user/system, 0.7 for import, 0.5 for model/tool",
    )
    sub.add_argument("--tag", action="append", default=[], help="a label; repeatable")

    sub = _add_command(
        commands,
        "recall",
        _lazy("cairn.cli.recalling", "recall"),
        "recall what is relevant to a query",
        scoped,
    )
    sub.add_argument("query", metavar="QUERY")
    sub.add_argument("--top-k", type=parse_top_k, default=DEFAULT_TOP_K, metavar="N")
    sub.add_argument("--namespace", help="only records under this namespace prefix")
    sub.add_argument(
        "--with-history",
        action="store_true",
        help="rank the conversation's turns and summaries beside the records (not journalled)",
    )
    _add_json(sub)

    sub = _add_command(commands, "history", _body("history"), "every version of one record", scoped)
    sub.add_argument("record_id", metavar="RECORD_ID")
    _add_json(sub)

    summary = (
        "what the actor's memory held at TIME (ISO 8601; a naive time is UTC; a date alone "
        "means the end of that day, 23:59:59.999999 UTC)"
    )
    sub = _add_command(commands, "as-of", _body("as_of"), summary, scoped)
    sub.add_argument(
        "time",
        metavar="TIME",
        type=parse_instant,
        help="e.g. 2026-03-01, 2026-03-01T09:30:00Z or 2026-03-01T09:30:00+01:00",
    )
    sub.add_argument("--namespace", help="only records under this namespace prefix")
    _add_json(sub)

    summary = "retract a record softly: recall stops returning it, its content is kept"
    sub = _add_command(commands, "forget", _body("forget"), summary, scoped)
    sub.add_argument("record_id", metavar="RECORD_ID")
    sub.add_argument("--reason", help="why, kept in the record's history (256 chars at most)")

    summary = (
        "re-materialise the exact versions a recall journaled; no new search; exits 1 if a "
        "replay no longer matches what was recalled"
    )
    sub = _add_command(commands, "replay", _body("replay"), summary, scoped)
    sub.add_argument("journal_ids", metavar="JOURNAL_ID", nargs="+")

    summary = (
        "destroy content for good: one record and everything that restates it (successors, "
        "summaries, pending rollouts, history chunks, its source turns), or (with "
        "--all-of-actor --yes) every record, event, journal entry and staged rollout of the actor"
    )
    sub = _add_command(commands, "erase", _lazy("cairn.cli.erasing", "erase"), summary, scoped)
    sub.add_argument("record_id", metavar="RECORD_ID", nargs="?")
    sub.add_argument("--all-of-actor", action="store_true", help="erase the whole actor")
    sub.add_argument("--yes", action="store_true", help="confirm --all-of-actor")
    sub.add_argument("--keep-events", action="store_true", help="keep the turns it came from")


def _add_demo_commands(commands: argparse._SubParsersAction[CliParser]) -> None:
    summary = (
        "a scripted conversation filed by an offline agent in one process, recalled and "
        "replayed from others: memory surviving between processes, on the embedded store"
    )
    sub = _add_command(commands, "demo", _lazy("cairn.demo.conversation_demo", "run_demo"), summary)
    sub.add_argument(
        "--store",
        type=Path,
        default=argparse.SUPPRESS,
        help=f"the demo's own store, never CAIRN_STORE (default: {default_demo_store()})",
    )
    sub.add_argument("--fresh", action="store_true", help="delete the demo store first")
    # The phases the demo runs in child processes; not part of the public surface.
    phase = commands.add_parser("demo-phase")
    phase.add_argument("phase")  # checked by the demo itself, which alone starts phases
    phase.add_argument("--store", type=Path, required=True)
    phase.set_defaults(run=_lazy("cairn.demo.conversation_demo", "run_phase"))
    _add_agent_demo_commands(commands)


def _add_agent_demo_commands(commands: argparse._SubParsersAction[CliParser]) -> None:
    summary = (
        "an agent loop with memory tools, across processes: a lesson learned in one run, "
        "recalled in the next, edited, and the edit shown by `cairn history`"
    )
    sub = _add_command(
        commands, "demo-agent", _lazy("cairn.demo.agent_demo", "run_demo_agent"), summary
    )
    sub.add_argument(
        "--store",
        type=Path,
        default=argparse.SUPPRESS,
        help=f"the demo's own store, never CAIRN_STORE (default: {default_demo_store()})",
    )
    sub.add_argument("--fresh", action="store_true", help="delete the demo store first")
    # The phases the agent demo runs in child processes; not part of the public surface.
    phase = commands.add_parser("demo-agent-phase")
    phase.add_argument("phase")  # checked by the demo itself, which alone starts phases
    phase.add_argument("--store", type=Path, required=True)
    phase.set_defaults(run=_lazy("cairn.demo.agent_demo", "run_phase"))


def build_parser() -> CliParser:
    """The full command line: one subcommand per use, each with its own ``--help``."""
    parser = CliParser(
        prog="cairn",
        description="Durable, governed long-term memory for AI agents, on an embedded store.",
        epilog="--actor, --memory and --store may come before or after the command. "
        "Errors are one line on stderr; set CAIRN_DEBUG=1 for tracebacks.",
    )
    parser.add_argument("--version", action="version", version=f"cairn {__version__}")
    _location_options(parser, default=None)
    commands = parser.add_subparsers(
        dest="command", metavar=PUBLIC_COMMANDS, parser_class=CliParser, required=True
    )
    _add_memory_commands(commands)
    for add in (add_inventory_commands, add_transfer_commands, add_reindex_command):
        add(commands, [_scope_options()])
    _add_demo_commands(commands)
    store_help = f"the embedded SQLite store (env CAIRN_STORE; default: {default_store_path()})"
    add_serve_command(commands, store_help)
    add_jobs_command(commands, store_help)
    add_quarantine_command(commands, store_help)
    add_doctor_command(commands, store_help)
    add_backup_command(commands, store_help)
    add_dlq_command(commands)
    add_restore_command(commands, [_scope_options()])
    add_changes_command(commands, store_help)
    add_mcp_command(commands, [_scope_options()])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``cairn`` command; the exit status is 0 on success, 2 on bad arguments, else 1."""
    try:
        args = resolve_locations(build_parser().parse_args(argv), os.environ)
        run: Command = args.run
        return run(args)
    except KeyboardInterrupt:
        print("cairn: error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: nothing left to say; silence the final flush.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return FAILURE_EXIT
    except Exception as exc:
        if os.environ.get("CAIRN_DEBUG") == "1":
            raise
        message, status = explain(exc)
        one_line = " ".join(message.splitlines())
        print(f"cairn: error: {one_line}", file=sys.stderr)
        return status
