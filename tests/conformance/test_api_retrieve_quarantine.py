"""RetrieveMemoryRecords reads the memory's quarantine list as recall does, on every backend: a
record whose session the operator quarantined counts as untrusted, so the untrusted share holds
and the answer is the selection ``cairn.recall.recall`` makes for the same query and policy;
the scope's journal entry names the quarantined records it showed, so replay renders them
quarantined whatever the list holds later. (The wire shape carries no trust label: what the
quarantine changes there is which records are answered.)"""

from __future__ import annotations

from typing import Any

from cairn.api.operations.retrieve import API_POLICY
from cairn.clock import FixedClock
from cairn.embed.hashing import HashingEmbedder
from cairn.models import Scope, Source, SourceKind
from cairn.ports import RecordPlacement, Stores
from cairn.quarantine import QUARANTINED_FILTER, QuarantineEntry, parse_selector
from cairn.recall import RecallQuery, recall, replay
from cairn.recall.render import QUARANTINED_LABEL
from tests.conformance.samples import create
from tests.unit.api_harness import Caller, build_api, create_memory

NAMESPACE = "/facts/a1/"
QUERY = "flight seat preference"
TOP_K = 8
PHONE = Source(kind=SourceKind.USER, event_id="ev-1", session_id="phone")
LAPTOP = Source(kind=SourceKind.USER, event_id="ev-9", session_id="laptop")  # compromised
# Each names the query's words and others of its own, so none is a paraphrase of another.
TAILS = (
    "anchor bicycle candle desert",
    "engine forest guitar harbor",
    "island jacket kettle ladder",
    "meadow needle orchard pencil",
    "quarry river saddle tunnel",
    "umbrella valley window yacht",
    "zipper acorn bridge castle",
    "dolphin eagle falcon glacier",
)


def _stored(stores: Stores, scope: Scope, text: str, source: Source) -> str:
    version = create(stores, text, scope=scope, namespace=NAMESPACE, sources=(source,))
    assert stores.directory is not None, "every backend keeps the record directory"
    placement = RecordPlacement(
        record_id=version.record_id, actor_id=scope.actor_id, namespace=NAMESPACE
    )
    stores.directory.place(scope.memory_id, [placement])
    return version.record_id


def _retrieved(call: Caller, memory: dict[str, Any]) -> list[str]:
    body = {"namespace": "/facts/", "searchCriteria": {"searchQuery": QUERY, "topK": TOP_K}}
    reply = call("POST", f"/memories/{memory['id']}/retrieve", body)
    assert reply.status == 200, reply.body
    return [row["memoryRecordId"] for row in reply.body["memoryRecordSummaries"]]


def test_retrieve_reads_quarantined_records_as_untrusted_as_recall_does(
    stores: Stores, clock: FixedClock
) -> None:
    call = Caller(build_api(stores, clock))
    memory = create_memory(call)
    scope = Scope(memory_id=memory["id"], actor_id="a1")
    trusted = _stored(stores, scope, "Prefers a window seat on flights", PHONE)
    laptop = {
        _stored(stores, scope, f"flight seat preference with {tail}", LAPTOP) for tail in TAILS
    }
    before = _retrieved(call, memory)
    assert len(set(before) & laptop) > TOP_K // 2  # stored labels: all trusted, no share

    assert stores.quarantine is not None, "every backend keeps the quarantine list"
    stores.quarantine.add(
        QuarantineEntry(
            memory_id=memory["id"],
            selector=parse_selector("session:laptop"),
            added_at=clock.now(),
        )
    )
    answered = _retrieved(call, memory)

    shown = set(answered) & laptop
    assert trusted in answered
    assert 0 < len(shown) <= TOP_K // 2  # the untrusted share of top_k 8
    query = RecallQuery(text=QUERY, namespace_prefix="/facts/", top_k=TOP_K)
    recalled = recall(
        scope,
        query,
        stores=stores,
        embedder=HashingEmbedder(),
        clock=clock,
        policy=API_POLICY,
        journal=False,
    )
    assert sorted(answered) == sorted(e.version.record_id for e in recalled.entries)

    # The scope's newest journal entry is this retrieve's; it names what it showed quarantined.
    entry = stores.journal.chain(scope, limit=1000)[-1]
    assert {s.record_id for s in entry.selected} == set(answered)
    assert set(entry.filters[QUARANTINED_FILTER].split(",")) == shown
    stores.quarantine.remove(memory["id"], parse_selector("session:laptop"))
    replayed = replay(scope, entry.journal_id, stores=stores)
    assert replayed.matches
    assert replayed.block.count(f"| untrusted | {QUARANTINED_LABEL} |") == len(shown)
