"""The clamp: truncate each entry, then admit entries in rank order while the block fits.

Two ceilings apply to the RENDERED block (frame included): ``max_block_bytes`` and, when a
context share is set, a token budget. Tokens are estimated as ``ceil(bytes / bytes_per_token)``
with 3 bytes per token by default, which overcounts English BPE text (~4 bytes per token) and
so errs on the side of a smaller block; scripts that tokenizers split into single bytes can
still exceed it, so give those a smaller ``bytes_per_token``. Admission stops at the first entry
that does not fit (a lower-ranked, shorter entry is never slipped in ahead of it) or at ``top_k``.
The one exception is the untrusted share: while trusted candidates exist, untrusted lines spend
at most ``max_untrusted_share`` of the bytes after the frame, and an untrusted line past that is
passed over (not a stop), so the trusted lines ranked below it still get their room.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from cairn.models import RecordVersion, Trust
from cairn.quarantine import is_quarantined
from cairn.recall.query import RecallPolicy
from cairn.recall.ranking import Ranked
from cairn.recall.render import (
    CAVEAT,
    HEADING,
    TRUNCATION_MARK,
    WEAK_LINE,
    BlockEntry,
    entry_date,
    entry_line,
    frame_bytes,
    is_contested,
    prepared_text,
)

_MARK_BYTES = len(TRUNCATION_MARK.encode("utf-8"))
# Heading and caveat joined; each entry line then adds its own bytes plus one "\n".
_FRAME_WITH_ENTRIES = len(f"{HEADING}\n{CAVEAT}".encode())
# A weak block spends its fixed label line (and its newline) before any entry.
_WEAK_LINE_COST = len(WEAK_LINE.encode("utf-8")) + 1


@dataclass(frozen=True, slots=True)
class Clamped:
    """What the budget admitted, in rank order, and what it cost; ``lines`` are the entries'
    ``entry_line`` (``render.block_of_lines`` makes the block of them)."""

    selected: tuple[Ranked, ...]
    entries: tuple[BlockEntry, ...]
    lines: tuple[str, ...]
    block_bytes: int
    truncated: int
    clamped: int
    weak: bool = False


def truncate_utf8(text: str, max_bytes: int) -> tuple[str, bool]:
    """``text`` if it fits in ``max_bytes`` of UTF-8, else its longest prefix that fits with
    ``TRUNCATION_MARK`` appended (mark included); never splits a character."""
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text, False
    room = max(0, max_bytes - _MARK_BYTES)
    # A cut inside a multi-byte sequence leaves a partial tail; "ignore" drops only that tail.
    prefix = encoded[:room].decode("utf-8", errors="ignore")
    return prefix + TRUNCATION_MARK, True


def estimated_tokens(byte_count: int, policy: RecallPolicy) -> int:
    """The conservative token estimate the budget uses: ``ceil(bytes / bytes_per_token)``."""
    return math.ceil(byte_count / policy.bytes_per_token)


def block_entry(version: RecordVersion, max_entry_bytes: int) -> BlockEntry:
    """The entry ``version`` renders as, its text clamped to ``max_entry_bytes``."""
    text, cut = truncate_utf8(prepared_text(version), max_entry_bytes)
    return BlockEntry(
        record_id=version.record_id,
        date=entry_date(version),
        confidence=version.confidence,
        trust=version.trust,
        text=text,
        truncated=cut,
        contested=is_contested(version),
        quarantined=is_quarantined(version),
    )


def clamp(
    ranked: Sequence[Ranked], policy: RecallPolicy, top_k: int, *, weak: bool = False
) -> Clamped:
    """Admit ``ranked`` (already deduplicated) in order while the rendered block stays within
    ``policy.block_byte_limit``; at most ``top_k`` entries. With ``weak`` the block's
    ``WEAK_LINE`` is paid for first (``Clamped.weak`` says whether the block carries it)."""
    limit = policy.block_byte_limit
    used = _FRAME_WITH_ENTRIES + (_WEAK_LINE_COST if weak else 0)
    # Untrusted lines may spend at most this many bytes while trusted candidates exist
    # (issue 17, crowding); one past it is passed over, so a trusted line below still fits.
    shared = any(r.candidate.trusted for r in ranked[:top_k])
    untrusted_room = policy.max_untrusted_share * (limit - used) if shared else float(limit)
    untrusted_used = 0
    selected: list[Ranked] = []
    entries: list[BlockEntry] = []
    lines: list[str] = []
    for item in ranked[:top_k]:
        entry = block_entry(item.candidate.version, policy.max_entry_bytes)
        line = entry_line(entry)
        cost = len(line.encode("utf-8")) + 1  # ``render.line_cost``, the line worked out once
        untrusted = entry.trust is Trust.UNTRUSTED
        if untrusted and untrusted_used + cost > untrusted_room:
            continue
        if used + cost > limit:
            break
        used += cost
        untrusted_used += cost if untrusted else 0
        selected.append(item)
        entries.append(entry)
        lines.append(line)
    if not entries:
        used = frame_bytes()
    return Clamped(
        selected=tuple(selected),
        entries=tuple(entries),
        lines=tuple(lines),
        block_bytes=used,
        truncated=sum(entry.truncated for entry in entries),
        clamped=len(ranked[:top_k]) - len(selected),
        weak=weak and bool(entries),
    )
