"""``BotApi``: the one Bot API method the backend calls, ``sendMessage``, over stdlib HTTP.

The base URL is configurable (``https://api.telegram.org`` by default), so tests point it at a
fake Bot API on loopback. The token is part of every URL, so URLs are never logged or put in an
error message. Text over Telegram's 4,096-character limit is sent as several messages.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any, Protocol

from cairn.errors import BotApiRejectedError, BotApiUnavailableError

DEFAULT_BASE_URL = "https://api.telegram.org"
MAX_MESSAGE_CHARS = 4096


class MessageSender(Protocol):
    def send_message(self, chat_id: int, text: str, *, reply_to: int | None = None) -> None:
        """Send ``text`` to the chat (in parts if it is long), replying to ``reply_to``."""
        ...


def message_parts(text: str) -> list[str]:
    """``text`` in pieces of at most 4,096 characters, cut at a line break where one is near."""
    parts: list[str] = []
    rest = text
    while len(rest) > MAX_MESSAGE_CHARS:
        cut = rest.rfind("\n", MAX_MESSAGE_CHARS // 2, MAX_MESSAGE_CHARS)
        cut = cut if cut > 0 else MAX_MESSAGE_CHARS
        parts.append(rest[:cut])
        rest = rest[cut:].lstrip("\n")
    return [*parts, rest] if rest else parts


class BotApi:
    """``MessageSender`` over the Bot API at ``base_url`` with the bot's ``token``."""

    def __init__(
        self, token: str, *, base_url: str = DEFAULT_BASE_URL, timeout_seconds: float = 10.0
    ) -> None:
        self._token = token
        self._base_url = base_url.rstrip("/")
        self._timeout = timeout_seconds

    def send_message(self, chat_id: int, text: str, *, reply_to: int | None = None) -> None:
        for index, part in enumerate(message_parts(text)):
            body: dict[str, Any] = {"chat_id": chat_id, "text": part}
            if reply_to is not None and index == 0:
                body["reply_parameters"] = {
                    "message_id": reply_to,
                    "allow_sending_without_reply": True,
                }
            self._call("sendMessage", body)

    def _call(self, method: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(  # noqa: S310 - the URL is ours: https or a test loopback
            f"{self._base_url}/bot{self._token}/{method}",
            data=json.dumps(body).encode("utf-8"),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:  # noqa: S310
                answer: dict[str, Any] = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            if exc.code == 429 or exc.code >= 500:
                raise BotApiUnavailableError(
                    f"Telegram answered {method} with HTTP {exc.code}; try again later"
                ) from None
            raise BotApiRejectedError(
                f"Telegram refused {method} with HTTP {exc.code}; check the bot token and "
                "the chat id"
            ) from None
        except (urllib.error.URLError, TimeoutError) as exc:
            raise BotApiUnavailableError(
                f"Telegram did not answer {method} ({type(exc).__name__}); try again later"
            ) from None
        if not answer.get("ok"):
            raise BotApiRejectedError(f"Telegram did not accept {method}")
        return answer
