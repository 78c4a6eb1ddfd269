"""``FakeBotApi``: a Bot API stand-in on loopback, for tests and local runs of the webhook.

It answers ``POST /bot<token>/sendMessage`` like Telegram (``{"ok": true, "result": ...}``),
records every message sent, refuses a wrong token with 401, and can be told to fail the next
calls with a status (429, 500, 403 …) to exercise retries. Start it, point ``BotApi`` (or
``CAIRN_TELEGRAM_BOT_API_URL``) at ``url``, stop it when done.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class SentMessage:
    chat_id: int
    text: str
    reply_to: int | None


class FakeBotApi:
    """A loopback Bot API for one bot token; ``sent`` holds what the bot said, in order."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.sent: list[SentMessage] = []
        self._failures: deque[int] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        # A short poll interval: stop() returns within 50 ms instead of half a second.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeBotApi:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def fail_next(self, *statuses: int) -> None:
        """Answer the next calls with these HTTP statuses, one each, instead of succeeding."""
        with self._lock:
            self._failures.extend(statuses)

    def _answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if path != f"/bot{self.token}/sendMessage":
            return 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
        with self._lock:
            if self._failures:
                status = self._failures.popleft()
                return status, {"ok": False, "error_code": status, "description": "failed"}
            reply = (body.get("reply_parameters") or {}).get("message_id")
            self.sent.append(SentMessage(int(body["chat_id"]), str(body["text"]), reply))
            number = len(self.sent)
        return 200, {"ok": True, "result": {"message_id": 10_000 + number, "text": body["text"]}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                status, answer = fake._answer(self.path, body)
                data = json.dumps(answer).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return  # quiet: request lines carry the token

        return Handler
