"""``TelegramState`` on every implementation: the in-memory reference and DynamoDB on moto.

Chat states are written only over the revision they were read at, and an update is claimed
once: a redelivery finds the claim, a replied claim keeps the reply, and only an in-progress
claim whose lease ended can be taken over.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from cairn.errors import ConflictError
from cairn.telegram import InMemoryTelegramState, SessionPolicy, TelegramState
from cairn.telegram.sessions import next_chat_state

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
BOT = "123456"


@pytest.fixture(params=["memory", "dynamodb"])
def state(request: pytest.FixtureRequest) -> Iterator[TelegramState]:
    if request.param == "memory":
        yield InMemoryTelegramState()
        return
    boto3 = pytest.importorskip("boto3")
    moto = pytest.importorskip("moto")
    from cairn.store.dynamodb.schema import TABLES, create_table_request
    from cairn.telegram.state_dynamodb import DynamoDBTelegramState

    with moto.mock_aws():
        client = boto3.client(
            "dynamodb",
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",  # noqa: S106 - moto's fake credentials
        )
        (items,) = [t for t in TABLES if t.logical_name == "items"]
        client.create_table(**create_table_request(items, "cairn-items"))
        yield DynamoDBTelegramState(client, items_table="cairn-items")


def test_a_chat_state_is_saved_only_over_the_revision_it_was_read_at(state: TelegramState) -> None:
    policy = SessionPolicy()
    assert state.chat(BOT, 42) is None
    first = next_chat_state(None, 42, T0, policy)
    state.save_chat(BOT, first)
    assert state.chat(BOT, 42) == first

    winner = next_chat_state(first, 42, T0 + timedelta(minutes=1), policy)
    loser = next_chat_state(first, 42, T0 + timedelta(minutes=2), policy)
    state.save_chat(BOT, winner)
    with pytest.raises(ConflictError):
        state.save_chat(BOT, loser)
    with pytest.raises(ConflictError):
        state.save_chat(BOT, first)  # a second "first message" after the chat exists
    assert state.chat(BOT, 42) == winner
    assert state.chat("654321", 42) is None  # another bot's chat with the same id


def test_an_update_is_claimed_once_and_keeps_its_reply(state: TelegramState) -> None:
    lease, keep = T0 + timedelta(minutes=2), T0 + timedelta(days=2)
    assert state.claim_update(BOT, 7, now=T0, lease_until=lease) is None
    again = state.claim_update(BOT, 7, now=T0, lease_until=lease)
    assert again is not None
    assert again.status == "in_progress"

    state.mark_replied(BOT, 7, session_id="2026-03-01", reply="Hello!", keep_until=keep)
    replied = state.claim_update(BOT, 7, now=T0 + timedelta(hours=1), lease_until=lease)
    assert replied is not None
    assert (replied.status, replied.session_id, replied.reply) == (
        "replied",
        "2026-03-01",
        "Hello!",
    )
    state.release_update(BOT, 7)  # only an in-progress claim can be released
    state.mark_done(BOT, 7, keep_until=keep)
    done = state.claim_update(BOT, 7, now=T0 + timedelta(hours=2), lease_until=lease)
    assert done is not None
    assert done.status == "done"


def test_a_released_claim_lets_the_redelivery_handle_the_update(state: TelegramState) -> None:
    lease = T0 + timedelta(minutes=2)
    assert state.claim_update(BOT, 8, now=T0, lease_until=lease) is None
    state.release_update(BOT, 8)
    assert state.claim_update(BOT, 8, now=T0, lease_until=lease) is None


def test_an_abandoned_claim_is_taken_over_once_its_lease_ends(state: TelegramState) -> None:
    lease = T0 + timedelta(minutes=2)
    assert state.claim_update(BOT, 9, now=T0, lease_until=lease) is None
    assert state.claim_update(BOT, 9, now=lease - timedelta(seconds=1), lease_until=lease)
    after = lease + timedelta(seconds=1)
    assert state.claim_update(BOT, 9, now=after, lease_until=after + timedelta(minutes=2)) is None
