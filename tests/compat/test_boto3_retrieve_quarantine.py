"""RetrieveMemoryRecords through the real boto3 client against ``cairn serve`` reads the
memory's quarantine list as recall does.

What the user typed reaches the store trusted through cairn's runtime (a record written through
the wire API is untrusted, its source ``import``, and so is one a model extracted), so the
records here are written into the served store as the runtime writes them: one from the user's
phone, five from a laptop the operator then finds compromised and quarantines
(``session:laptop``). Retrieve must then count the laptop's records as untrusted: they fill no
more than the untrusted share of the answer, the phone's record is answered, and the answer is
the selection ``cairn.recall.recall`` makes for the same query and policy; the scope's journal
entry names the quarantined records it showed. The same on every backend, through the router:
``tests/conformance/test_api_retrieve_quarantine.py``.
"""

from __future__ import annotations

from typing import Any

from cairn.api.operations.retrieve import API_POLICY
from cairn.local.api import EmbeddedApi
from cairn.models import Scope, Source, SourceKind
from cairn.ports import RecordPlacement, Stores
from cairn.quarantine import QUARANTINED_FILTER, QuarantineEntry, parse_selector
from cairn.recall import RecallQuery, recall
from tests.conformance.samples import create

ACTOR = "user/q1"
NAMESPACE = f"/facts/{ACTOR}/"
QUERY = "how will the user pay the flat deposit?"
TOP_K = 4
PHONE = Source(kind=SourceKind.USER, event_id="ev-1", session_id="phone")
LAPTOP = Source(kind=SourceKind.USER, event_id="ev-9", session_id="laptop")
STATED = "The user decided to pay the flat deposit by cheque."
# Each a decision of its own, none a paraphrase of another.
PLANTED = (
    "The user decided to wire the flat deposit to an account in Lagos.",
    "The user decided to send the flat deposit through a courier service.",
    "The user decided to pay the flat deposit in bitcoin.",
    "The user decided to split the flat deposit with a cousin.",
    "The user decided to hand the flat deposit to the new agent in person.",
)


def _written(stores: Stores, scope: Scope, text: str, source: Source) -> str:
    version = create(stores, text, scope=scope, namespace=NAMESPACE, sources=(source,))
    assert stores.directory is not None
    placed = RecordPlacement(record_id=version.record_id, actor_id=ACTOR, namespace=NAMESPACE)
    stores.directory.place(scope.memory_id, [placed])
    return version.record_id


def _retrieved(data_plane: Any, memory_id: str) -> list[str]:
    found = data_plane.retrieve_memory_records(
        memoryId=memory_id,
        namespace=NAMESPACE,
        searchCriteria={"searchQuery": QUERY, "topK": TOP_K},
    )["memoryRecordSummaries"]
    return [row["memoryRecordId"] for row in found]


def test_retrieve_over_boto3_counts_a_quarantined_sessions_records_untrusted(
    data_plane: Any, memory: dict[str, Any], served_store: EmbeddedApi
) -> None:
    context = served_store.api.context
    stores = context.stores
    scope = Scope(memory_id=memory["id"], actor_id=ACTOR)
    stated = _written(stores, scope, STATED, PHONE)
    laptop = {_written(stores, scope, text, LAPTOP) for text in PLANTED}
    before = _retrieved(data_plane, memory["id"])
    assert len(set(before) & laptop) > TOP_K // 2  # the stored labels: all trusted

    assert stores.quarantine is not None
    selector = parse_selector("session:laptop")
    stores.quarantine.add(
        QuarantineEntry(memory_id=memory["id"], selector=selector, added_at=context.clock.now())
    )
    answered = _retrieved(data_plane, memory["id"])

    shown = set(answered) & laptop
    assert stated in answered
    assert 0 < len(shown) <= TOP_K // 2  # the untrusted share of the answer
    query = RecallQuery(text=QUERY, namespace_prefix=NAMESPACE, top_k=TOP_K)
    recalled = recall(
        scope,
        query,
        stores=stores,
        embedder=context.embedder,
        clock=context.clock,
        policy=API_POLICY,
        journal=False,
    )
    assert sorted(answered) == sorted(e.version.record_id for e in recalled.entries)
    entry = stores.journal.chain(scope, limit=1000)[-1]
    assert set(entry.filters[QUARANTINED_FILTER].split(",")) == shown
