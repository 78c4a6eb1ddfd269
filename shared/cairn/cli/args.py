"""Reading the ``cairn`` command line: value types, and where --actor/--memory/--store come from.

Each location option is taken from the command line (before or after the command name), else
from the environment (``CAIRN_ACTOR``, ``CAIRN_MEMORY``, ``CAIRN_STORE``), else from
``cairn.toml`` (``cairn.cli.config``), else from a default; ``--actor`` has no default.
The demo uses its own store and never ``CAIRN_STORE``.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Mapping
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any, NoReturn

from cairn.cli.config import load_config
from cairn.cli.errors import UsageError
from cairn.local.paths import default_store_path

DEFAULT_MEMORY = "default"
# Copies of the library's values, so building the parser loads neither pydantic nor numpy;
# tests/unit/test_cli_startup.py checks each against its source.
DEFAULT_TOP_K = 8  # cairn.recall.query.DEFAULT_TOP_K
MAX_TOP_K = 100  # cairn.recall.query.MAX_TOP_K
SOURCE_KINDS = ("user", "model", "tool", "import", "system")  # cairn.models.SourceKind
# Commands that work on the demo's fixed scope rather than on --actor/--memory.
DEMO_COMMANDS = frozenset({"demo", "demo-phase", "demo-agent", "demo-agent-phase"})
# Commands that serve every actor and memory of a store: they need only --store.
STORE_COMMANDS = frozenset(
    {"serve", "jobs", "quarantine", "doctor", "backup", "changes"}
)  # the whole store, no actor
AWS_COMMANDS = frozenset({"dlq"})  # the deployed stack: no store, no actor
# Commands that work on a whole store or memory, or on one actor when --actor is given.
ACTOR_OPTIONAL = frozenset({"ls", "stats", "export", "reindex"})


class CliParser(argparse.ArgumentParser):
    """argparse, but a bad argument raises ``UsageError`` instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message}; see `{self.prog} --help`")

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """An unknown command names only the public ones (never the internal phases the
        demos run), with the closest as a suggestion; the word typed is not echoed."""
        if isinstance(action, argparse._SubParsersAction) and value not in (action.choices or ()):
            public = [choice.dest for choice in action._choices_actions]
            close = difflib.get_close_matches(str(value), public, n=1)
            hint = f"did you mean {close[0]}? " if close else ""
            raise argparse.ArgumentError(
                None, f"unknown command; {hint}the commands are {', '.join(public)}"
            )
        super()._check_value(action, value)


def parse_instant(text: str) -> datetime:
    """ISO 8601 to an aware UTC datetime: a naive time is UTC, a date alone is that day's end."""
    try:
        day = date.fromisoformat(text)
    except ValueError:
        pass
    else:
        return datetime.combine(day, time.max, tzinfo=UTC)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO 8601 time; write e.g. 2026-03-01 or 2026-03-01T09:30:00Z"
        ) from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def parse_top_k(text: str) -> int:
    """An integer in ``1..MAX_TOP_K``."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_TOP_K:
        raise argparse.ArgumentTypeError(
            f"takes a whole number from 1 to {MAX_TOP_K}, got {text!r}"
        )
    return value


def parse_unit(text: str) -> float:
    """A number in ``[0, 1]``."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"takes a number from 0 to 1, got {text!r}")
    return value


def default_demo_store() -> Path:
    """``<user data dir>/demo.db``: the demo never writes into the real store by default."""
    return default_store_path().with_name("demo.db")


def resolve_locations(args: argparse.Namespace, environ: Mapping[str, str]) -> argparse.Namespace:
    """``args`` with actor, memory and store filled from the environment or defaults;
    ``UsageError`` when no actor is given either way."""
    if args.command in DEMO_COMMANDS:
        args.store = args.store or default_demo_store()
        return args
    if args.command in AWS_COMMANDS:
        return args
    config = load_config(environ)
    if args.command in STORE_COMMANDS:
        _refuse_empty(args, "store")
        args.store = args.store or _store_from(environ, config.store)
        return args
    _refuse_empty(args, "actor", "memory", "store")
    # Only an option left out falls back to the environment, then to cairn.toml: `--actor ""`
    # is an error above, never a silent switch to CAIRN_ACTOR. An empty variable is unset.
    if args.actor is None:
        args.actor = environ.get("CAIRN_ACTOR") or config.actor
    if args.actor is None and args.command not in ACTOR_OPTIONAL:
        raise UsageError(
            "no actor given: pass --actor ID, set CAIRN_ACTOR, or set actor in cairn.toml; "
            f"see `cairn {args.command} --help`"
        )
    if args.memory is None:
        args.memory = environ.get("CAIRN_MEMORY") or config.memory or DEFAULT_MEMORY
    if args.store is None:
        args.store = _store_from(environ, config.store)
    return args


def _store_from(environ: Mapping[str, str], configured: Path | None) -> Path:
    named = environ.get("CAIRN_STORE")
    return Path(named) if named else configured or default_store_path()


def _refuse_empty(args: argparse.Namespace, *options: str) -> None:
    """``UsageError`` for an option given an empty value (``--actor ""``, ``--store ""``)."""
    for option in options:
        value = getattr(args, option, None)
        if value is None:
            continue
        if isinstance(value, Path) and str(value) == ".":  # what Path("") becomes
            raise UsageError(
                "--store names no file: give the path of a store file, e.g. --store "
                f"~/cairn.db, or leave it out; see `cairn {args.command} --help`"
            )
        if isinstance(value, str) and not value.strip():
            raise UsageError(
                f"--{option} is empty: give it a value (e.g. --{option} "
                f"{'tg:12345' if option == 'actor' else DEFAULT_MEMORY}) or leave it out to "
                f"use CAIRN_{option.upper()}; see `cairn {args.command} --help`"
            )
