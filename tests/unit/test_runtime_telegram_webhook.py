"""``TelegramBackend`` end to end in process: the in-memory store and state, a scripted model,
and the real ``BotApi`` talking to a fake Bot API on loopback.

Each delivery is answered at most once, failures before the reply are retried by redelivery,
failures after it only append, and the prompt carries the persona, the recall block and the
session's own turns.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from cairn.changes import Create, NewRecord
from cairn.errors import BotApiUnavailableError, ModelRejectedError, StoreUnavailableError
from cairn.model_request import ModelRequest
from cairn.models import Conversational, EventInput, Scope, Source, SourceKind
from cairn.ports import Stores
from cairn.telegram import (
    BotApi,
    InMemoryTelegramState,
    TelegramBackend,
    TelegramSettings,
)
from cairn.telegram.fake_bot_api import FakeBotApi
from cairn.testing import FixedClock, HashingEmbedder, InMemoryBackend, ScriptedModel

TOKEN = "123456:test-token"  # noqa: S105 - a fake bot token
SECRET = "s3cret-webhook_token"  # noqa: S105 - a fake webhook secret
HEADERS = {"X-Telegram-Bot-Api-Secret-Token": SECRET, "Content-Type": "application/json"}
SCOPE = Scope(memory_id="telegram", actor_id="tg:42")


def update(update_id: int, text: str, *, message_id: int = 1, **extra: Any) -> str:
    message = {
        "message_id": message_id,
        "from": {"id": 42, "is_bot": False, "first_name": "Ada", "language_code": "en"},
        "chat": {"id": 42, "first_name": "Ada", "type": "private"},
        "date": 1772355600,
        "text": text,
        **extra,
    }
    return json.dumps({"update_id": update_id, "message": message})


class Harness:
    def __init__(self, fake: FakeBotApi) -> None:
        self.clock = FixedClock()
        self.stores: Stores = InMemoryBackend(self.clock).stores()
        self.model = ScriptedModel()
        self.fake = fake
        self.state = InMemoryTelegramState()
        self.appended: list[EventInput] = []
        self.fail_appends = 0
        self.backend = TelegramBackend(
            settings=TelegramSettings.for_token(TOKEN, webhook_secret=SECRET),
            state=self.state,
            stores=self.stores,
            model=self.model,
            sender=BotApi(TOKEN, base_url=fake.url),
            persona=lambda: "# SOUL.md\n\nYou are Pip, a cheerful barista.",
            clock=self.clock,
            embedder=HashingEmbedder(),
            appender=self._append,
        )

    def _append(self, scope: Scope, event: EventInput) -> object:
        if self.fail_appends:
            self.fail_appends -= 1
            raise StoreUnavailableError("throttled")
        self.appended.append(event)
        return self.stores.events.append(scope, event)

    def turns(self, session_id: str) -> list[tuple[str, str]]:
        return [
            (p.role.value, p.text)
            for e in self.stores.events.list_events(SCOPE, session_id).items
            for p in e.payload
            if isinstance(p, Conversational)
        ]


@pytest.fixture
def fake() -> Iterator[FakeBotApi]:
    server = FakeBotApi(TOKEN).start()
    yield server
    server.stop()


@pytest.fixture
def bot(fake: FakeBotApi) -> Harness:
    return Harness(fake)


@pytest.mark.parametrize(
    "headers",
    [{}, {"X-Telegram-Bot-Api-Secret-Token": "wrong"}, {"x-telegram-bot-api-secret-token": ""}],
)
def test_a_delivery_without_the_secret_is_refused_and_does_nothing(
    bot: Harness, headers: dict[str, str]
) -> None:
    outcome = bot.backend.handle(headers, update(1, "hello"))
    assert (outcome.status, outcome.outcome) == (401, "unauthorized")
    assert bot.model.requests == []
    assert bot.fake.sent == []
    assert (
        bot.state.claim_update("123456", 1, now=bot.clock.now(), lease_until=bot.clock.now())
        is None
    )


def test_the_secret_header_is_matched_whatever_its_case(bot: Harness) -> None:
    bot.model.queue("Hi Ada!")
    lower = {"x-telegram-bot-api-secret-token": SECRET}
    assert bot.backend.handle(lower, update(1, "hello")).outcome == "answered"


@pytest.mark.parametrize(
    ("body", "status", "outcome"),
    [
        ("not json", 400, "malformed"),
        ('{"message": {}}', 400, "malformed"),
        (
            json.dumps({"update_id": 5, "edited_message": json.loads(update(5, "x"))["message"]}),
            200,
            "ignored",
        ),
        (update(6, "   "), 200, "ignored"),
        (
            json.dumps(
                {
                    "update_id": 7,
                    "message": {
                        **json.loads(update(7, "hi"))["message"],
                        "from": {"id": 9, "is_bot": True},
                    },
                }
            ),
            200,
            "ignored",
        ),
        (json.dumps({"update_id": 8, "my_chat_member": {"chat": {"id": 42}}}), 200, "ignored"),
    ],
)
def test_what_is_not_a_person_s_text_message_is_acknowledged_and_left_alone(
    bot: Harness, body: str, status: int, outcome: str
) -> None:
    answered = bot.backend.handle(HEADERS, body)
    assert (answered.status, answered.outcome) == (status, outcome)
    assert bot.model.requests == []


def test_a_message_is_answered_in_reply_and_both_turns_are_appended(bot: Harness) -> None:
    bot.model.queue("Good morning, Ada!")
    outcome = bot.backend.handle(HEADERS, update(1, "Good morning!", message_id=11))
    assert (outcome.status, outcome.outcome) == (200, "answered")
    assert [(m.chat_id, m.text, m.reply_to) for m in bot.fake.sent] == [
        (42, "Good morning, Ada!", 11)
    ]
    assert bot.turns("2026-01-01") == [
        ("USER", "Good morning!"),
        ("ASSISTANT", "Good morning, Ada!"),
    ]
    (request,) = bot.model.requests
    assert request.system.startswith("# SOUL.md\n\nYou are Pip, a cheerful barista.\n\n")
    assert "## Recalled memories" in request.system
    assert [(m.role, m.text) for m in request.messages] == [("user", "Good morning!")]


def test_a_redelivered_update_is_answered_once(bot: Harness) -> None:
    bot.model.queue("Hi!")
    first = bot.backend.handle(HEADERS, update(1, "hello"))
    again = bot.backend.handle(HEADERS, update(1, "hello"))
    assert (first.outcome, again.outcome) == ("answered", "duplicate")
    assert len(bot.model.requests) == 1
    assert len(bot.fake.sent) == 1
    assert len(bot.appended) == 2


def test_a_failed_reply_releases_the_update_for_telegram_to_redeliver(bot: Harness) -> None:
    bot.model.queue("First try.", "Second try.")
    bot.fake.fail_next(502)
    with pytest.raises(BotApiUnavailableError):
        bot.backend.handle(HEADERS, update(1, "hello"))
    assert bot.appended == []  # nothing was said, so nothing is recorded

    outcome = bot.backend.handle(HEADERS, update(1, "hello"))
    assert outcome.outcome == "answered"
    assert [m.text for m in bot.fake.sent] == ["Second try."]
    assert bot.turns("2026-01-01") == [("USER", "hello"), ("ASSISTANT", "Second try.")]


def test_a_chat_that_blocked_the_bot_is_not_retried(bot: Harness) -> None:
    bot.model.queue("Hi!")
    bot.fake.fail_next(403)
    assert bot.backend.handle(HEADERS, update(1, "hello")).outcome == "undeliverable"
    assert bot.backend.handle(HEADERS, update(1, "hello")).outcome == "duplicate"
    assert len(bot.model.requests) == 1


def test_a_failure_after_the_reply_resumes_by_appending_without_replying_again(
    bot: Harness,
) -> None:
    bot.model.queue("Hi Ada!")
    bot.fail_appends = 1
    with pytest.raises(StoreUnavailableError):
        bot.backend.handle(HEADERS, update(1, "hello"))
    assert [m.text for m in bot.fake.sent] == ["Hi Ada!"]

    outcome = bot.backend.handle(HEADERS, update(1, "hello"))
    assert outcome.outcome == "resumed"
    assert len(bot.model.requests) == 1  # the model was not asked again
    assert len(bot.fake.sent) == 1  # and the user got one answer
    assert bot.turns("2026-01-01") == [("USER", "hello"), ("ASSISTANT", "Hi Ada!")]
    assert bot.backend.handle(HEADERS, update(1, "hello")).outcome == "duplicate"


def test_a_refused_model_call_gets_the_fallback_reply(bot: Harness) -> None:
    bot.model.queue(ModelRejectedError("blocked by a guardrail"))
    bot.backend.handle(HEADERS, update(1, "something odd"))
    assert [m.text for m in bot.fake.sent] == ["Sorry, I can't answer that right now."]


def test_later_messages_of_the_day_carry_the_session_s_turns(bot: Harness) -> None:
    bot.model.queue("Hi!", "You said hello.")
    bot.backend.handle(HEADERS, update(1, "hello"))
    bot.clock.advance(minutes=5)
    bot.backend.handle(HEADERS, update(2, "what did I say?", message_id=2))
    second: ModelRequest = bot.model.requests[1]
    assert [(m.role, m.text) for m in second.messages] == [
        ("user", "hello"),
        ("assistant", "Hi!"),
        ("user", "what did I say?"),
    ]


def test_the_next_day_starts_a_new_session_and_recalls_what_memory_holds(bot: Harness) -> None:
    bot.model.queue("Hi!", "An oat milk flat white, as always.")
    bot.backend.handle(HEADERS, update(1, "hello"))
    fact = NewRecord(
        namespace="/preferences/tg:42/",
        category="preference",
        content="The user prefers oat milk flat whites.",
        confidence=0.9,
        sources=(Source(kind=SourceKind.USER, session_id="2026-01-01"),),
    )
    bot.stores.records.apply(SCOPE, [Create(record=fact)])

    bot.clock.advance(timedelta(days=1))
    bot.backend.handle(HEADERS, update(2, "What should I order: oat milk flat white?"))
    tomorrow: ModelRequest = bot.model.requests[1]
    assert "The user prefers oat milk flat whites." in tomorrow.system
    assert [m.text for m in tomorrow.messages] == ["What should I order: oat milk flat white?"]
    assert bot.turns("2026-01-02")[0] == ("USER", "What should I order: oat milk flat white?")
