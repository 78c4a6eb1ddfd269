"""``cairn backup DEST``: an online, checked copy of the embedded store (docs/operations.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from cairn.cli.args import CliParser


def add_backup_command(commands: argparse._SubParsersAction[CliParser], store_help: str) -> None:
    summary = "copy the embedded store to a new file while it is in use (SQLite online backup)"
    sub = commands.add_parser("backup", help=summary, description=summary)
    sub.set_defaults(run=backup)
    sub.add_argument("dest", type=Path, help="the backup file to create (never overwritten)")
    sub.add_argument("--store", type=Path, default=argparse.SUPPRESS, help=store_help)


def backup(args: argparse.Namespace) -> int:
    from cairn.store.sqlite.backup import backup_store

    pages = backup_store(args.store, args.dest)
    print(f"backed up {args.store} to {args.dest} ({pages} pages, integrity ok)")
    return 0
