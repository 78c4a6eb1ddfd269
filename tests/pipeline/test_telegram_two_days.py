"""The Telegram backend on moto: a scripted two-day conversation through the webhook Lambda.

Recorded Telegram updates (``telegram_updates/*.json``, shaped as the Bot API documents them)
reach ``functions/telegram/handler.py`` as function-URL events. Replies go to a fake Bot API on
loopback; the chat model is scripted and keeps every request. Day 1's turns are appended
through the extraction pipeline, its trigger fires, and the extraction Lambda files what Ada
said; on day 2 a new session starts, and the prompt the model is given carries day 1's memories.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from cairn.clock import FixedClock
from cairn.model_request import ModelRequest
from cairn.models import Conversational, Scope
from cairn.telegram.fake_bot_api import FakeBotApi
from cairn.testing import ScriptedModel
from tests.pipeline.aws import REGION, Deployment, LambdaContext, LambdaRuntime
from tests.pipeline.scenario import live_records

UPDATES = Path(__file__).parent / "telegram_updates"
TOKEN = "7012345678:AAHtestTokenForCairnPipeline"  # noqa: S105 - a fake bot token
SECRET = "cairn-webhook-secret_0123456789"  # noqa: S105 - a fake webhook secret
CHAT = 48151623
SCOPE = Scope(memory_id="telegram", actor_id=f"tg:{CHAT}")
PERSONA = {
    "SOUL.md": "You are Pip, the barista bot of a small roastery. Be warm and brief.",
    "USER.md": "Regulars like it when you remember their order.",
}


def delivery(name: str, *, secret: str = SECRET) -> dict[str, Any]:
    """The function-URL event Telegram's POST of a recorded update becomes."""
    body = (UPDATES / f"{name}.json").read_text()
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": "/",
        "headers": {
            "content-type": "application/json",
            "x-telegram-bot-api-secret-token": secret,
            "host": "abcdefg.lambda-url.us-east-1.on.aws",
        },
        "requestContext": {"http": {"method": "POST", "path": "/"}},
        "body": body,
        "isBase64Encoded": False,
    }


@pytest.fixture
def bot_api() -> Iterator[FakeBotApi]:
    server = FakeBotApi(TOKEN).start()
    yield server
    server.stop()


@pytest.fixture
def chat_model() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture
def telegram(
    deployment: Deployment,
    session: Any,
    bot_api: FakeBotApi,
    chat_model: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Any]:
    """The webhook handler, its secret and persona in moto, its wiring pointed at them."""
    secret = session.client("secretsmanager", region_name=REGION).create_secret(
        Name="cairn-telegram-bot",
        SecretString=json.dumps({"bot_token": TOKEN, "webhook_secret": SECRET}),
    )
    s3 = session.client("s3", region_name=REGION)
    s3.create_bucket(Bucket="cairn-persona")
    for name, text in PERSONA.items():
        s3.put_object(Bucket="cairn-persona", Key=name, Body=text.encode())
    for name, value in {
        "CAIRN_TELEGRAM_SECRET_ARN": secret["ARN"],
        "CAIRN_TELEGRAM_MODEL_ID": "amazon.nova-lite-v1:0",
        "CAIRN_TELEGRAM_PERSONA_BUCKET": "cairn-persona",
        "CAIRN_TELEGRAM_BOT_API_URL": bot_api.url,
    }.items():
        monkeypatch.setenv(name, value)
    from functions.telegram import wiring

    wiring.configure(model=chat_model)
    yield importlib.import_module("functions.telegram.handler").lambda_handler
    wiring.configure()


def _events(stores: Any, session_id: str) -> list[tuple[str, str]]:
    return [
        (p.role.value, p.text)
        for e in stores.events.list_events(SCOPE, session_id).items
        for p in e.payload
        if isinstance(p, Conversational)
    ]


def test_day_two_is_answered_with_what_day_one_taught_the_memory(
    telegram: Any,
    chat_model: ScriptedModel,
    bot_api: FakeBotApi,
    extraction_lambda: LambdaRuntime,
    clock: FixedClock,
) -> None:
    from functions._common import wiring

    clock.set(datetime(2026, 1, 1, 8, 0, tzinfo=UTC))
    chat_model.queue(
        "Hi! I'm Pip. What can I get you?",
        "Lovely to meet you, Ada. Oat milk flat white it is.",
        "Lisbon office, noted.",
        "Your usual: an oat milk flat white, on its way to your Lisbon office.",
    )
    status = lambda event: telegram(event, LambdaContext())["statusCode"]  # noqa: E731

    # A forged delivery (wrong secret) is refused before anything happens.
    assert status(delivery("day1-02-name", secret="guess")) == 401  # noqa: S106

    # Day 1: three messages (and a sticker, which needs no answer); Telegram redelivers one.
    for name in ("day1-01-start", "day1-02-name", "day1-03-sticker", "day1-04-office"):
        assert status(delivery(name)) == 200
        clock.advance(seconds=90)
    assert status(delivery("day1-02-name")) == 200  # the duplicate: answered once
    assert [m.text for m in bot_api.sent] == [
        "Hi! I'm Pip. What can I get you?",
        "Lovely to meet you, Ada. Oat milk flat white it is.",
        "Lisbon office, noted.",
    ]
    assert all(m.chat_id == CHAT for m in bot_api.sent)
    assert [m.reply_to for m in bot_api.sent] == [17, 19, 23]
    stores = wiring.stores()
    assert len(_events(stores, "2026-01-01")) == 6  # both turns of each message, once

    # Six turns fire the memory's message trigger: extraction files what Ada said.
    assert extraction_lambda.poll() == []
    remembered = " ".join(r.content for r in live_records(stores, SCOPE))
    assert "oat milk" in remembered
    assert "Lisbon" in remembered

    # Day 2: a new session, assembled with day 1's memories.
    clock.set(datetime(2026, 1, 2, 7, 45, tzinfo=UTC))
    assert status(delivery("day2-01-order")) == 200
    day_two: ModelRequest = chat_model.requests[-1]
    assert day_two.system.startswith(f"# SOUL.md\n\n{PERSONA['SOUL.md']}")
    recalled = day_two.system.split("## Recalled memories", 1)[1]
    assert "oat milk flat whites" in recalled
    assert [m.text for m in day_two.messages] == [
        "Good morning! Order my usual flat white please: which milk do I like?"
    ]
    assert bot_api.sent[-1].text.startswith("Your usual: an oat milk flat white")
    assert _events(stores, "2026-01-02")[0][0] == "USER"
    assert len(chat_model.requests) == 4  # one model call per message, none for duplicates

    # The persona was read once for the warm container, then only checked (304) on day 2.
    from functions.telegram import wiring as telegram_wiring

    persona = telegram_wiring.backend().persona.__self__  # type: ignore[attr-defined]
    assert persona.fetches == len(PERSONA)
