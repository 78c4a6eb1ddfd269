"""Events may carry structured JSON payloads (AgentCore's ``json`` payload) beside blobs."""

from __future__ import annotations

from datetime import UTC, datetime

from cairn.models import BlobPayload, EventInput, JsonPayload
from cairn.ports import Stores
from tests.conformance.samples import SCOPE

DOCUMENT = {"tool": "weather", "days": 3, "nested": [1, 2.5, None, {"ok": True}], "text": "Zürich"}


def test_a_json_payload_round_trips_apart_from_a_blob(stores: Stores) -> None:
    given = EventInput(
        session_id="s1",
        event_timestamp=datetime(2026, 1, 1, tzinfo=UTC),
        payload=(JsonPayload(document=DOCUMENT), BlobPayload(blob={"document": DOCUMENT})),
    )

    appended = stores.events.append(SCOPE, given)
    fetched = stores.events.get_event(SCOPE, "s1", appended.event_id)

    assert fetched.payload == given.payload
    assert isinstance(fetched.payload[0], JsonPayload)
    assert isinstance(fetched.payload[1], BlobPayload)
