"""How the rollout index sits in the items table (``docs/dynamodb.md``, "Rollout index").

    pk = R#<memory>|<actor>   sk = T#<session_id>   counters  d, v (+ dpk, dsk if idle-timed)
                              sk = P#<rollout_id>   pending   d, v, st (+ dpk, dsk if due)
                              sk = C#<rollout_id>   consumed  d, st, expires_at

``P#`` items are exactly the pending (not consumed) rollouts, oldest claim first: rollout ids
begin with their claim time. Consuming one moves it to ``C#``, kept a while so a duplicate
delivery is recognised, then expired by TTL.

The sparse ``due`` index (``cairn.store.dynamodb.schema.DUE_INDEX``) holds only what the sweep
must look at: ``dpk = DI#<shard>`` for counters with an idle deadline, ``DR#<shard>`` for
rollouts with a ``due_at``; ``dsk = <time>#<pk>#<sk>``. The shard (a digest of the scope) spreads
the index's write load over ``SHARDS`` partitions; the sweep reads each.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from cairn.models import Scope
from cairn.rollout.index import Rollout, RolloutState, SessionCounters, due_at
from cairn.store.dynamodb.codec import Item, encode_time, key, n, s, scope_pk, text

SHARDS = 4
IDLE_PREFIX, DUE_PREFIX = "DI#", "DR#"
COUNTERS_FROM, PENDING_FROM, CONSUMED_FROM = "T#", "P#", "C#"
# A consumed rollout is remembered this long, so a late duplicate delivery is a no-op.
CONSUMED_KEPT = timedelta(days=30)


def counters_sk(session_id: str) -> str:
    return f"{COUNTERS_FROM}{session_id}"


def pending_sk(rollout_id: str) -> str:
    return f"{PENDING_FROM}{rollout_id}"


def consumed_sk(rollout_id: str) -> str:
    return f"{CONSUMED_FROM}{rollout_id}"


def shard_of(pk: str) -> int:
    return int(hashlib.sha256(pk.encode("utf-8")).hexdigest()[:8], 16) % SHARDS


def due_bound(now: datetime) -> str:
    """The lowest ``dsk`` after every entry due at or before ``now`` (``$`` sorts after ``#``)."""
    return f"{encode_time(now)}$"


def _due(item: Item, prefix: str, when: datetime | None) -> Item:
    if when is not None:
        pk, sk = text(item, "pk"), text(item, "sk")
        item["dpk"] = s(f"{prefix}{shard_of(pk)}")
        item["dsk"] = s(f"{encode_time(when)}#{pk}#{sk}")
    return item


def counters_item(counters: SessionCounters) -> Item:
    item: Item = {
        **key(scope_pk(counters.scope), counters_sk(counters.session_id)),
        "d": s(counters.model_dump_json()),
        "v": n(counters.version),
    }
    return _due(item, IDLE_PREFIX, counters.idle_due_at if counters.pending else None)


def rollout_item(rollout: Rollout, *, version: int) -> Item:
    """A pending rollout's item; ``version`` counts its writes (the condition of the next)."""
    item: Item = {
        **key(scope_pk(rollout.scope), pending_sk(rollout.rollout_id)),
        "d": s(rollout.model_dump_json()),
        "v": n(version),
        "st": s(rollout.state.value),
    }
    return _due(item, DUE_PREFIX, due_at(rollout))


def consumed_item(rollout: Rollout) -> Item:
    expires = rollout.updated_at + CONSUMED_KEPT
    return {
        **key(scope_pk(rollout.scope), consumed_sk(rollout.rollout_id)),
        "d": s(rollout.model_dump_json()),
        "st": s(RolloutState.CONSUMED.value),
        "expires_at": n(int(expires.timestamp())),
    }


def consumption_items(table: str, consumed: Rollout, read_version: int) -> list[Item]:
    """Delete ``P#`` on the version it was read at, and Put ``C#``: two transaction items that
    consume the rollout exactly once (a second consumer's Delete condition fails)."""
    delete = {
        "TableName": table,
        "Key": rollout_key(consumed.scope, consumed.rollout_id),
        "ConditionExpression": "#v = :read",
        "ExpressionAttributeNames": {"#v": "v"},
        "ExpressionAttributeValues": {":read": n(read_version)},
    }
    return [{"Delete": delete}, {"Put": {"TableName": table, "Item": consumed_item(consumed)}}]


def decode_counters(item: Item) -> SessionCounters:
    return SessionCounters.model_validate_json(text(item, "d"))


def decode_rollout(item: Item) -> Rollout:
    return Rollout.model_validate_json(text(item, "d"))


def rollout_key(scope: Scope, rollout_id: str, *, consumed: bool = False) -> Item:
    sort_key = consumed_sk(rollout_id) if consumed else pending_sk(rollout_id)
    return key(scope_pk(scope), sort_key)
