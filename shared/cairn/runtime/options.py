"""``SessionOptions``: every knob of a memory session, with the reason for each default."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from cairn.models import Frozen, Namespace
from cairn.recall import DEFAULT_POLICY, RecallPolicy
from cairn.recall.query import DEFAULT_TOP_K, MAX_TOP_K


class SessionOptions(Frozen):
    """How a session batches turns and recalls; a value out of range is refused."""

    # Batching ------------------------------------------------------------------------------
    # Four user/assistant exchanges per write: few enough that a crash loses little (a normal
    # exit loses nothing: the buffer is flushed at close and at interpreter exit).
    batch_size: int = Field(default=8, ge=1, le=100)
    # 64 KiB of turn text: a pasted document is written promptly instead of held in memory.
    max_buffer_bytes: int = Field(default=65_536, ge=1, le=10_000_000)

    # Assembly-time recall --------------------------------------------------------------------
    # DESIGN §5: at most 8 entries by default, the block's byte budget permitting.
    boot_top_k: int = Field(default=DEFAULT_TOP_K, ge=1, le=MAX_TOP_K)
    # Only records under this prefix (segment boundaries); None: the whole scope.
    namespace_prefix: Namespace | None = None
    policy: RecallPolicy = DEFAULT_POLICY

    # Per-turn recall (off: the block assembled at the start of the run is all the run gets) --
    per_turn_recall: bool = False
    # A turn adds a few memories, not a second boot block.
    turn_top_k: int = Field(default=3, ge=1, le=20)
    # Above recall's 0.1 cosine floor: an injection nobody asked for needs stronger evidence
    # than an answer to an explicit query. Keyword-only hits (no cosine) are never injected.
    turn_min_evidence: float = Field(default=0.4, ge=0.0, le=1.0)

    # The boot window (cairn.history.boot_window) --------------------------------------------
    # Tokens for the session's own history at decreasing resolution, assembled once per run;
    # None (the default) shows none: a host that keeps the whole conversation itself needs none.
    history_budget_tokens: int | None = Field(default=None, ge=256, le=200_000)

    # Tools -----------------------------------------------------------------------------------
    # Offer memory_edit where the store can curate; a host can withhold it.
    curate: bool = True
    # Untrusted recall reaching a write or a host's sink (cairn.runtime.taint): "overlap" asks
    # the host's release for a call whose arguments repeat an untrusted entry shown in this
    # session; "strict" for every such call once any untrusted entry was shown.
    taint: Literal["overlap", "strict"] = "overlap"
