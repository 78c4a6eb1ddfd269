"""Client-token claims: the first claim wins, a retry sees it, expiry and release free the key."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from cairn.clock import FixedClock
from cairn.ports import Stores
from tests.conformance.api_state import T0, require_idempotency
from tests.conformance.backends import open_backend

KEY = "k" * 64
LATER = T0 + timedelta(minutes=1)


def test_the_first_claim_wins_and_a_retry_sees_it(stores: Stores, backend_name: str) -> None:
    claims = require_idempotency(stores, backend_name)

    assert claims.claim(KEY, "fp-1", now=T0, expires_at=LATER) is None
    seen = claims.claim(KEY, "fp-2", now=T0, expires_at=LATER)

    assert seen is not None
    assert (seen.fingerprint, seen.outcome, seen.expires_at) == ("fp-1", None, LATER)


def test_a_completed_claim_carries_its_outcome(stores: Stores, backend_name: str) -> None:
    claims = require_idempotency(stores, backend_name)
    claims.claim(KEY, "fp-1", now=T0, expires_at=LATER)
    kept_until = T0 + timedelta(hours=24)

    claims.complete(KEY, {"eventId": "1#ab", "n": [1, 2]}, expires_at=kept_until)

    seen = claims.claim(KEY, "fp-1", now=LATER, expires_at=LATER)
    assert seen is not None
    assert (seen.outcome, seen.expires_at) == ({"eventId": "1#ab", "n": [1, 2]}, kept_until)


def test_an_expired_claim_is_replaced(stores: Stores, backend_name: str) -> None:
    claims = require_idempotency(stores, backend_name)
    claims.claim(KEY, "fp-1", now=T0, expires_at=LATER)

    assert claims.claim(KEY, "fp-2", now=LATER, expires_at=LATER + timedelta(minutes=1)) is None

    seen = claims.claim(KEY, "fp-3", now=LATER, expires_at=LATER)
    assert seen is not None
    assert seen.fingerprint == "fp-2"


def test_a_released_claim_frees_the_key(stores: Stores, backend_name: str) -> None:
    claims = require_idempotency(stores, backend_name)
    claims.claim(KEY, "fp-1", now=T0, expires_at=LATER)

    claims.release(KEY)
    claims.release(KEY)  # releasing twice is harmless

    assert claims.claim(KEY, "fp-2", now=T0, expires_at=LATER) is None


def test_completing_an_unclaimed_key_stores_nothing(stores: Stores, backend_name: str) -> None:
    claims = require_idempotency(stores, backend_name)

    claims.complete(KEY, {"x": 1}, expires_at=LATER)

    assert claims.claim(KEY, "fp-1", now=T0, expires_at=LATER) is None


def test_a_claim_not_made_durable_behaves_as_a_durable_one(
    stores: Stores, backend_name: str
) -> None:
    """``durable=False`` changes only what a power loss may take (SQLite: no fsync of its
    own), never what a retry sees."""
    claims = require_idempotency(stores, backend_name)

    assert claims.claim(KEY, "fp-1", now=T0, expires_at=LATER, durable=False) is None
    in_progress = claims.claim(KEY, "fp-1", now=T0, expires_at=LATER, durable=False)
    claims.complete(KEY, {"eventId": "1#ab"}, expires_at=LATER, durable=False)
    done = claims.claim(KEY, "fp-1", now=T0, expires_at=LATER)

    assert in_progress is not None
    assert in_progress.outcome is None
    assert done is not None
    assert done.outcome == {"eventId": "1#ab"}


def test_a_claim_not_made_durable_survives_a_reopen(
    persistent_backend: str, clock: FixedClock, tmp_path: Path
) -> None:
    """A process that dies after the call loses nothing: only power loss may."""
    first = open_backend(persistent_backend, clock, tmp_path)
    claims = require_idempotency(first, persistent_backend)
    claims.claim(KEY, "fp-1", now=T0, expires_at=LATER, durable=False)
    claims.complete(KEY, {"eventId": "1#ab"}, expires_at=LATER, durable=False)
    first.close()

    again = open_backend(persistent_backend, clock, tmp_path)
    try:
        seen = require_idempotency(again, persistent_backend).claim(
            KEY, "fp-1", now=T0, expires_at=LATER
        )
    finally:
        again.close()

    assert seen is not None
    assert seen.outcome == {"eventId": "1#ab"}
