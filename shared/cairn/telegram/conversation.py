"""The model request for one Telegram message: the persona and recall block as the system
prompt, the session's recent turns, then the message (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from cairn.model_request import ModelMessage
from cairn.models import Conversational, Event, Role

_ROLES = {Role.USER: "user", Role.ASSISTANT: "assistant"}


def conversation(history: Sequence[Event], text: str, *, limit: int) -> tuple[ModelMessage, ...]:
    """The last ``limit`` user/assistant turns of ``history`` (in order), then ``text`` as the
    user's; consecutive turns of one role are joined (models want the roles to alternate) and
    the conversation starts with the user."""
    turns = [
        (_ROLES[payload.role], payload.text)
        for event in history
        for payload in event.payload
        if isinstance(payload, Conversational) and payload.role in _ROLES
    ]
    turns = [*turns[-limit:], ("user", text)] if limit else [("user", text)]
    merged: list[tuple[str, str]] = []
    for role, said in turns:
        if merged and merged[-1][0] == role:
            merged[-1] = (role, f"{merged[-1][1]}\n\n{said}")
        elif merged or role == "user":
            merged.append((role, said))
    return tuple(ModelMessage(role=role, text=said) for role, said in merged)
