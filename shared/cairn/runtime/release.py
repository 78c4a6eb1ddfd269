"""Release: untrusted recall reaches a write or a host's sink only when the host's gate says so.

A run's ``SinkGuard`` is asked before every call that writes durable state (``learn``,
``memory_edit``) and before every sink the host declares (send a message, call an API). When
the call's arguments are derived from untrusted recall (``cairn.runtime.taint``), the guard asks
the host's ``ReleaseGate`` with a ``ReleaseRequest`` naming the call, its arguments and the
untrusted entries it carries. The gate answers a ``Release`` (who released it, and why) or
``None``; the default, ``deny_release``, answers ``None``. Without a release the call is refused
with ``ReleaseRequiredError`` and nothing runs. With one, the release is journalled before the
call runs, as a journal entry of the scope (so it is in the scope's hash chain, and ``cairn
replay`` renders exactly the released entries): filters ``release`` (the sink),
``released_by``, ``reason``, ``recalls`` (the journal ids of the recalls that showed the
entries) and ``arguments_digest`` (sha256 of the canonical JSON of the arguments: the journal
keeps no copy of them). A call that carries no untrusted recall needs no release and journals
nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cairn.errors import ReleaseRequiredError
from cairn.models import Scope
from cairn.recall import RecallPolicy
from cairn.runtime.session_store import SessionStore
from cairn.runtime.taint import TaintedEntry, TaintLedger

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ReleaseRequest:
    """What the host's gate is asked: may ``sink`` run with ``arguments``, which carry the
    untrusted recalled entries ``tainted``, in run ``run_id``?"""

    sink: str
    arguments: Mapping[str, Any]
    tainted: tuple[TaintedEntry, ...]
    run_id: str


@dataclass(frozen=True, slots=True)
class Release:
    """The host's explicit release: who gave it (a user id, an operator, a policy name) and
    why. Journalled with the call it released."""

    released_by: str
    reason: str = ""


ReleaseGate = Callable[[ReleaseRequest], Release | None]
"""Asked when a write or a sink carries untrusted recall; ``None`` refuses the call."""


def deny_release(request: ReleaseRequest) -> Release | None:
    """The default gate: untrusted recall never reaches a write or a sink."""
    return None


@dataclass(frozen=True, slots=True)
class Released:
    """A call the guard let through with a release, and the journal entry that records it
    (``journal_id`` is ``None`` where the store keeps no journal of ours: over HTTP)."""

    sink: str
    release: Release
    tainted: tuple[TaintedEntry, ...]
    journal_id: str | None


def arguments_digest(arguments: Mapping[str, Any]) -> str:
    """sha256 hex of the arguments as canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class SinkGuard:
    """Checks one run's writes and sinks against the session's ledger of untrusted recall."""

    def __init__(
        self,
        *,
        ledger: TaintLedger,
        gate: ReleaseGate,
        store: SessionStore | None,
        scope: Scope | None,
        run_id: str,
        policy: RecallPolicy,
        strict: bool,
    ) -> None:
        self._ledger = ledger
        self._gate = gate
        self._store = store
        self._scope = scope
        self._run_id = run_id
        self._policy = policy
        self._strict = strict
        self.releases: list[Released] = []

    def check(self, sink: str, arguments: Mapping[str, Any]) -> Released | None:
        """``None`` when the call carries no untrusted recall; the journalled release when the
        gate gave one; else ``ReleaseRequiredError`` (the call must not run)."""
        tainted = self._ledger.derived(arguments, strict=self._strict)
        if not tainted:
            return None
        request = ReleaseRequest(
            sink=sink, arguments=arguments, tainted=tainted, run_id=self._run_id
        )
        release = self._gate(request)
        if release is None:
            logger.info("cairn: %s refused, it carries %d untrusted memories", sink, len(tainted))
            raise ReleaseRequiredError(sink, [entry.record_id for entry in tainted])
        journal_id = None
        if self._store is not None and self._scope is not None:
            filters = {
                "release": sink,
                "released_by": release.released_by,
                "reason": release.reason,
                "recalls": ",".join(sorted({e.journal_id for e in tainted if e.journal_id})),
                "arguments_digest": arguments_digest(arguments),
                "run": self._run_id,
            }
            items = [entry.item for entry in tainted]
            journal_id = self._store.journal_release(self._scope, filters, items, self._policy)
        released = Released(sink=sink, release=release, tainted=tainted, journal_id=journal_id)
        self.releases.append(released)
        logger.info("cairn: %s released by the host (journal %s)", sink, journal_id)
        return released
