"""What every ``cairn`` subcommand that reads or writes a store starts from: the caller's
scope, the open stores and the clock (``opened``), and the check that the actor is known.

Kept apart from the command bodies so ``cairn recall`` (``cairn.cli.recalling``), the command
an agent runs on every turn, imports only what a recall needs: not extraction, consolidation
or the offline model that ``cairn remember`` plans with.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from cairn.clock import SystemClock
from cairn.errors import NotFoundError
from cairn.local.store import open_store
from cairn.models import Scope
from cairn.ports import Clock, Stores


@dataclass(frozen=True)
class Context:
    """What one command works with: the caller's scope, the open stores, the clock."""

    scope: Scope
    stores: Stores
    clock: Clock


def scope_of(args: argparse.Namespace) -> Scope:
    """The scope --memory and --actor name; ``ValidationError`` if either id is malformed."""
    return Scope(memory_id=args.memory, actor_id=args.actor)


@contextmanager
def opened(args: argparse.Namespace, *, create: bool = False) -> Iterator[Context]:
    """The context for ``args`` (scope from --memory/--actor, store from --store), closed after."""
    scope = scope_of(args)
    clock = SystemClock()
    stores = open_store(args.store, clock, create=create)
    try:
        yield Context(scope=scope, stores=stores, clock=clock)
    finally:
        stores.close()


def require_known_actor(ctx: Context, store: Path) -> None:
    """``NotFoundError`` naming the actors the store knows, if this one has neither records
    nor events: most likely a mistyped --actor, so nothing is searched or journaled."""
    if ctx.stores.records.list_records(ctx.scope, include_inactive=True, limit=1).items:
        return
    if ctx.stores.events.list_sessions(ctx.scope, limit=1).items:
        return
    from cairn.store.sqlite import SQLiteBackend

    owner = ctx.stores.owner
    known = (
        sorted({c.actor_id for c in owner.inventory(ctx.scope.memory_id)})
        if isinstance(owner, SQLiteBackend)
        else []
    )
    shown = ", ".join(known[:10]) + (", ..." if len(known) > 10 else "")
    raise NotFoundError(
        f"actor {ctx.scope.actor_id!r} has no records or events in memory "
        f"{ctx.scope.memory_id!r} of {store}, so there is nothing to recall (and nothing was "
        f"journaled); check --actor (actors here: {shown or 'none'})"
    )
