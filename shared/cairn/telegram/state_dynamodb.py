"""``DynamoDBTelegramState``: chat sessions and update claims in cairn's items table.

Item shapes (docs/dynamodb.md, "Telegram"):

- chat: ``pk = TG#<bot>#C#<chat id>``, ``sk = CHAT``; ``d`` the state's JSON, ``rev`` its
  revision.
- update claim: ``pk = TG#<bot>#U#<update id>``, ``sk = CLAIM``; ``st`` status, ``lu`` lease or
  keep-until (epoch seconds), ``sid`` session and ``rp`` reply once replied, ``expires_at``
  (TTL, the same instant as ``lu``).

One partition per chat and per update, so no bot-wide hot key. Errors are translated by
``cairn.store.dynamodb.DynamoDBClient`` (a failed condition is ``ConflictError``).
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from typing import Any

from cairn.errors import ConflictError
from cairn.store.dynamodb import DynamoDBClient
from cairn.telegram.sessions import ChatState
from cairn.telegram.state import UpdateClaim

PREFIX = "TG#"


def _chat_key(bot_id: str, chat_id: int) -> dict[str, Any]:
    return {"pk": {"S": f"{PREFIX}{bot_id}#C#{chat_id}"}, "sk": {"S": "CHAT"}}


def _claim_key(bot_id: str, update_id: int) -> dict[str, Any]:
    return {"pk": {"S": f"{PREFIX}{bot_id}#U#{update_id}"}, "sk": {"S": "CLAIM"}}


def _epoch(moment: datetime) -> dict[str, str]:
    return {"N": str(int(moment.timestamp()))}


class DynamoDBTelegramState:
    """``TelegramState`` in the items table, through an injected boto3 DynamoDB client."""

    def __init__(self, client: Any, *, items_table: str) -> None:
        self._db = DynamoDBClient(client)
        self._table = items_table

    def chat(self, bot_id: str, chat_id: int) -> ChatState | None:
        found = self._db.call(
            "get_item", TableName=self._table, Key=_chat_key(bot_id, chat_id), ConsistentRead=True
        ).get("Item")
        return ChatState.model_validate_json(found["d"]["S"]) if found else None

    def save_chat(self, bot_id: str, state: ChatState) -> None:
        # Two deliveries for one chat may race at a session boundary: each read revision r
        # and writes r + 1; the condition lets exactly one of them win, the other re-reads.
        condition = "attribute_not_exists(pk)" if state.revision == 1 else "rev = :previous"
        values = {} if state.revision == 1 else {":previous": {"N": str(state.revision - 1)}}
        item = {
            **_chat_key(bot_id, state.chat_id),
            "d": {"S": state.model_dump_json()},
            "rev": {"N": str(state.revision)},
        }
        self._db.call(
            "put_item",
            TableName=self._table,
            Item=item,
            ConditionExpression=condition,
            **({"ExpressionAttributeValues": values} if values else {}),
        )

    def claim_update(
        self, bot_id: str, update_id: int, *, now: datetime, lease_until: datetime
    ) -> UpdateClaim | None:
        # The race this closes: Telegram redelivers an update whose first delivery is still
        # being answered (or answered already). Only an absent claim, or an in-progress one
        # whose lease ended (its function died), may be taken; anything else is answered once.
        item = {
            **_claim_key(bot_id, update_id),
            "st": {"S": "in_progress"},
            "lu": _epoch(lease_until),
            "expires_at": _epoch(lease_until),
        }
        try:
            self._db.call(
                "put_item",
                TableName=self._table,
                Item=item,
                ConditionExpression="attribute_not_exists(pk) OR (st = :progress AND lu < :now)",
                ExpressionAttributeValues={":progress": {"S": "in_progress"}, ":now": _epoch(now)},
            )
        except ConflictError:
            return self._claim(bot_id, update_id, now)
        return None

    def mark_replied(
        self, bot_id: str, update_id: int, *, session_id: str, reply: str, keep_until: datetime
    ) -> None:
        self._put_claim(
            bot_id,
            update_id,
            "replied",
            keep_until,
            {"sid": {"S": session_id}, "rp": {"S": reply}},
        )

    def mark_done(self, bot_id: str, update_id: int, *, keep_until: datetime) -> None:
        self._put_claim(bot_id, update_id, "done", keep_until, {})

    def release_update(self, bot_id: str, update_id: int) -> None:
        # Absent, or past in_progress (replied, done): nothing to release.
        with contextlib.suppress(ConflictError):
            self._db.call(
                "delete_item",
                TableName=self._table,
                Key=_claim_key(bot_id, update_id),
                ConditionExpression="st = :progress",
                ExpressionAttributeValues={":progress": {"S": "in_progress"}},
            )

    def _put_claim(
        self,
        bot_id: str,
        update_id: int,
        status: str,
        keep_until: datetime,
        extra: dict[str, Any],
    ) -> None:
        item = {
            **_claim_key(bot_id, update_id),
            "st": {"S": status},
            "lu": _epoch(keep_until),
            "expires_at": _epoch(keep_until),
            **extra,
        }
        self._db.call("put_item", TableName=self._table, Item=item)

    def _claim(self, bot_id: str, update_id: int, now: datetime) -> UpdateClaim:
        found = self._db.call(
            "get_item",
            TableName=self._table,
            Key=_claim_key(bot_id, update_id),
            ConsistentRead=True,
        ).get("Item")
        if found is None:  # released between our write and this read: treat as taken
            return UpdateClaim(update_id=update_id, status="in_progress", lease_until=now)
        return UpdateClaim(
            update_id=update_id,
            status=found["st"]["S"],
            lease_until=datetime.fromtimestamp(int(found["lu"]["N"]), UTC),
            session_id=found.get("sid", {}).get("S"),
            reply=found.get("rp", {}).get("S"),
        )
