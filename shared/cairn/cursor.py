"""Opaque pagination cursors, bound to the scope and the query that issued them.

A cursor is base64url(JSON) carrying the position and a digest of (scope, query). Decoding
checks that digest, so a cursor replayed in another scope, or with other filters, is refused
with ``InvalidCursorError`` instead of leaking a position from elsewhere. Cursors are not
secret and not signed: they carry no data the caller could not already read.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any

from cairn.errors import InvalidCursorError


def _binding(scope_key: str, query: dict[str, Any]) -> str:
    material = json.dumps([scope_key, query], sort_keys=True, default=str)
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:24]


def encode_cursor(scope_key: str, query: dict[str, Any], position: Any) -> str:
    """An opaque token for resuming after ``position`` in this scope and query."""
    raw = json.dumps({"b": _binding(scope_key, query), "p": position}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode("utf-8")).decode("ascii").rstrip("=")


def decode_cursor(scope_key: str, query: dict[str, Any], token: str) -> Any:
    """The position inside ``token``; ``InvalidCursorError`` if it was issued elsewhere."""
    try:
        padded = token + "=" * (-len(token) % 4)
        body = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        binding, position = body["b"], body["p"]
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeError) as exc:
        raise InvalidCursorError(
            "pagination cursor is malformed; pass back the next token exactly as returned"
        ) from exc
    if binding != _binding(scope_key, query):
        raise InvalidCursorError(
            "pagination cursor was issued for another scope or query; start again without it"
        )
    return position
