"""Identifier factories: time-ordered, random-suffixed, in the shapes AgentCore uses."""

from __future__ import annotations

import secrets
import time
from datetime import datetime


def new_record_id() -> str:
    """``mem-`` + 12 hex digits of epoch milliseconds + 24 random hex digits (40 chars in all)."""
    return f"mem-{int(time.time() * 1000):012x}{secrets.token_hex(12)}"


def new_event_id(at: datetime) -> str:
    """``<epoch-ms>#<hex>``, the shape AgentCore event ids have."""
    return f"{int(at.timestamp() * 1000)}#{secrets.token_hex(8)}"
