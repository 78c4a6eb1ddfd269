"""``BotApi`` against a fake Bot API on loopback: what is sent, how long text is split, and
which failures are worth retrying."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cairn.errors import BotApiRejectedError, BotApiUnavailableError
from cairn.telegram.bot_api import MAX_MESSAGE_CHARS, BotApi, message_parts
from cairn.telegram.fake_bot_api import FakeBotApi, SentMessage

TOKEN = "123456:test-token"  # noqa: S105 - a fake bot token


@pytest.fixture
def fake() -> Iterator[FakeBotApi]:
    server = FakeBotApi(TOKEN).start()
    yield server
    server.stop()


def test_a_reply_is_sent_to_the_chat_as_a_reply_to_the_message(fake: FakeBotApi) -> None:
    BotApi(TOKEN, base_url=fake.url).send_message(42, "Hello, Ada!", reply_to=7)
    assert fake.sent == [SentMessage(chat_id=42, text="Hello, Ada!", reply_to=7)]


def test_a_long_reply_is_sent_in_parts_only_the_first_replying(fake: FakeBotApi) -> None:
    paragraph = "x" * 3000
    BotApi(TOKEN, base_url=fake.url).send_message(42, f"{paragraph}\n{paragraph}", reply_to=7)
    assert [len(m.text) for m in fake.sent] == [3000, 3000]
    assert [m.reply_to for m in fake.sent] == [7, None]


def test_parts_never_exceed_telegram_s_limit_and_lose_nothing() -> None:
    text = "word " * 3000
    parts = message_parts(text)
    assert all(len(part) <= MAX_MESSAGE_CHARS for part in parts)
    assert "".join(parts) == text
    assert message_parts("short") == ["short"]


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (429, BotApiUnavailableError),
        (502, BotApiUnavailableError),
        (400, BotApiRejectedError),
        (403, BotApiRejectedError),
    ],
)
def test_throttling_and_server_errors_are_retryable_the_rest_is_not(
    fake: FakeBotApi, status: int, error: type[Exception]
) -> None:
    fake.fail_next(status)
    with pytest.raises(error) as raised:
        BotApi(TOKEN, base_url=fake.url).send_message(42, "hi")
    assert raised.value.retryable is (error is BotApiUnavailableError)  # type: ignore[attr-defined]
    assert TOKEN not in str(raised.value)


def test_a_wrong_token_is_refused_and_never_echoed(fake: FakeBotApi) -> None:
    with pytest.raises(BotApiRejectedError) as raised:
        BotApi("999:wrong", base_url=fake.url).send_message(42, "hi")
    assert "999:wrong" not in str(raised.value)
    assert fake.sent == []


def test_an_unreachable_bot_api_is_retryable() -> None:
    with pytest.raises(BotApiUnavailableError):
        BotApi(TOKEN, base_url="http://127.0.0.1:9", timeout_seconds=2).send_message(42, "hi")
