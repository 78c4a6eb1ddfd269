"""What a recall asks for (``RecallQuery``) and every knob that shapes it (``RecallPolicy``).

Defaults are provisional: each carries a one-line reason, and ``benchmarks/quality.py`` sweeps
them on the LoCoMo dev split before the measured values replace these. Every knob lives here so
a sweep never has to patch code.
"""

from __future__ import annotations

import math
import weakref
from typing import Literal, Self

from pydantic import Field, model_validator

from cairn.models import Frozen, Namespace, Slug, UtcDatetime
from cairn.recall.render import frame_bytes

# The RetrieveMemoryRecords wire limit (searchQuery 1-10000 characters): the library accepts
# whatever the API accepts. The agent tool `memory_recall` adds its own, tighter 2000-byte cap.
MAX_QUERY_CHARS = 10_000
MAX_TOP_K = 100
DEFAULT_TOP_K = 8

# Recency is worth at most this share of a score (DESIGN §5.3); the validator enforces it.
MAX_RECENCY_WEIGHT = 0.3


class RecallQuery(Frozen):
    """One recall request, pinned by the caller to a scope; ``text`` is 1-10000 characters."""

    text: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    namespace_prefix: Namespace | None = None
    strategy: Slug | None = None
    top_k: int = Field(default=DEFAULT_TOP_K, ge=1, le=MAX_TOP_K)
    as_of: UtcDatetime | None = None

    @model_validator(mode="after")
    def _text_is_not_blank(self) -> Self:
        if not self.text.strip():
            raise ValueError("query text must contain words, not only whitespace")
        return self

    def filters(self) -> dict[str, str]:
        """The filters as the journal records them (unset filters are left out)."""
        found = {
            "namespace_prefix": self.namespace_prefix,
            "strategy": self.strategy,
            "as_of": self.as_of.isoformat() if self.as_of else None,
        }
        return {key: value for key, value in found.items() if value is not None}


class RecallPolicy(Frozen):
    """Every knob of the recall pipeline; a policy that cannot hold its own frame is refused."""

    # Candidates ----------------------------------------------------------------------------
    # Measured with the subject left out of the embedded query (subject_share, below), which
    # lowers cosines overall (docs/benchmarks.md, crossval and the harness figures there).
    # LoCoMo R@10 / fact-set R@5: floor 0.3 -> 0.713 / 0.662, 0.2 -> 0.748 / 0.792, 0.15 ->
    # 0.759 / 0.856, 0.1 -> 0.764 / 0.891. The floor no longer decides whether a block is
    # trusted (the confidence bar below labels it weak); it keeps out rows no question of
    # either set is answered by. The cost: a block is full more often (foreign questions see
    # 8.0 of 8 entries, 95% of them marked weak).
    relevance_floor: float = Field(default=0.1, ge=0.0, le=1.0)
    # The weak fallback's bar, when no cosine reaches relevance_floor and no word is shared
    # (the block is then marked weak): a second, lower bar, so a question never comes back
    # empty while some row is near it ("what does the user drink?" / "I prefer green tea" is
    # 0.285, above both bars now). Half the floor.
    weak_floor: float = Field(default=0.05, ge=0.0, le=1.0)
    # A block is weak (labelled so) unless the pool holds a match worth trusting: the best
    # cosine reaches confident_cosine, or stands confident_margin above the fifth best, or the
    # best row holds confident_keyword of the query's term weight (recall.relevance.confident);
    # 0 / 0 / 0 is never weak. The pick of the cross-validated grid (docs/benchmarks.md,
    # crossval; 36 of 44 folds): fact-set no-answer questions empty or weak 85.4% (83.3%
    # held out by user, 84.4% by paraphrase family), answered ones weak 47% (their answers
    # are often at cosine 0.2-0.3); LoCoMo questions weak 11%. Margin 0.12 labels 67% of
    # no-answer questions weak or empty, and 25% of answered ones weak.
    confident_cosine: float = Field(default=0.5, ge=0.0, le=1.0)
    confident_margin: float = Field(default=0.18, ge=0.0, le=1.0)
    confident_keyword: float = Field(default=0.4, ge=0.0, le=1.01)
    # Rows ranked by keywords alone need this share of the best BM25 score: a row that shares
    # only a word found almost everywhere ("user") scores under a tenth of a real match.
    keyword_floor: float = Field(default=0.1, ge=0.0, le=1.0)
    # One CPU batch of MiniLM (~0.3 s); beyond it, unembedded heads are scored by keywords only.
    max_reembed: int = Field(default=32, ge=0, le=1000)
    # Classic Okapi values (Robertson & Zaragoza 2009); short one-line facts barely need tuning.
    bm25_k1: float = Field(default=1.2, ge=0.0, le=3.0)
    bm25_b: float = Field(default=0.75, ge=0.0, le=1.0)

    # Query understanding (recall.subject): a capitalised word or "user" that at least this
    # share of the rows hold names the memory's subject, and is left out of the embedded query
    # (keywords still see it, but a match on it alone scores nothing); 0 is off. Fact-set R@5
    # at floor 0: 0.737 -> 0.873 (0.1), 0.869 (0.2), 0.821 (0.3); LoCoMo R@10 at floor 0: 0.757
    # -> 0.764, adversarial 0.852 -> 0.890.
    subject_share: float = Field(default=0.1, ge=0.0, le=1.0)

    # Fusion --------------------------------------------------------------------------------
    # "blend" keeps score gaps (ranking multipliers stay secondary); "rrf" only keeps ranks.
    fusion: Literal["blend", "rrf"] = "blend"
    # Keyword share of the blend. With keyword_scale "best", LoCoMo dev R@5/R@20 ran 0.0 ->
    # 0.419/0.615, 0.3 -> 0.599/0.758, 0.5 -> 0.596/0.743. With "query" (below) keyword shares
    # are smaller, and 0.5 keeps LoCoMo where "best" at 0.3 had it (R@5/R@10 0.647/0.755 vs
    # 0.648/0.752; 0.3 gives 0.636/0.745); docs/benchmarks.md, crossval, has both sets.
    keyword_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    # What the blend's keyword share is relative to: "best", the pool's best BM25 score (the
    # best match counts 1 even if it shares only a common word), or "query", the query's own
    # term weight (recall.relevance). On the fact set a question naming the user ("what does
    # Maya drink?") matches every record that names Maya; "query" takes R@5 at floor 0 from
    # 0.649 to 0.774 (weight 0.3), and LoCoMo stays within a point (docs/benchmarks.md).
    keyword_scale: Literal["best", "query"] = "query"
    # The constant of Cormack et al. (2009), also the one measured on LoCoMo (shared/data).
    rrf_k: int = Field(default=60, ge=1, le=1000)

    # Context expansion (recall.context) -----------------------------------------------------
    # A hit lends a neighbour at distance d (same session or thread, told in sequence)
    # relevance x weight**d; 0 turns expansion off, and below 1 a loan stays below its lender.
    # LoCoMo dev (docs/benchmarks.md, ideas and sweep), R@10: alone on "ideas off" 0.685 ->
    # 0.746; with the defaults, weight 0.7 -> 0.713, 0.8 -> 0.746, 0.9 -> 0.752, 0.95 -> 0.747.
    # The cost: another conversation's questions get 6.19 of 8 entries instead of 5.47.
    context_weight: float = Field(default=0.9, ge=0.0, lt=1.0)
    # Neighbours per side: a question, its answer and the follow-up. Span 1 loses 3 points of
    # R@10; 3 gains nothing and shows more to foreign questions (6.33 of 8).
    context_span: int = Field(default=2, ge=1, le=8)
    # Farther apart than this, two records are not one exchange: half an hour of conversation.
    context_window_seconds: float = Field(default=1800.0, gt=0.0, le=86_400.0)
    # Only the best hits lend, so a tail of weak matches cannot flood the block: 3 lenders bring
    # back 3.7 neighbours per question and reach R@10/R@20 0.752/0.821; 10 bring 11.6 for
    # 0.751/0.810; 1 loses half a point of R@10.
    context_hits: int = Field(default=3, ge=1, le=MAX_TOP_K)
    # Lenders for a question that asks for several things (recall.question: "which cities has
    # John been to?"), whose answer is spread over sessions. LoCoMo dev, categories 1-4, R@10
    # 0.764 -> 0.772 (multi-hop 0.417 -> 0.438, open-domain 0.464 -> 0.487, no category
    # lower), adversarial unchanged (0.886); 3 is the same as context_hits (docs/benchmarks.md,
    # "Choosing the recall defaults").
    list_context_hits: int = Field(default=1, ge=1, le=MAX_TOP_K)

    # Query signals (recall.signals) ----------------------------------------------------------
    # Relevance x (1 + weight) when the query names one of the record's entities; 0 is off.
    # LoCoMo (speakers as entities), categories 1-4, on top of the defaults: 0.2 lifts R@1/R@10
    # from 0.382/0.752 to 0.435/0.774. But the adversarial questions (category 5) name the
    # wrong person on purpose, and there 0.2 costs 19 points of R@1 and 8 of R@10: over all 997
    # questions the lift nets nothing at R@10 and loses at R@1. Off until a memory knows its
    # entities are asked about reliably; the knob stays for those that do.
    entity_weight: float = Field(default=0.0, ge=0.0, le=1.0)
    # Relevance x (1 + weight) when the record's date is in a period the query names; 0 is off.
    # Only ~11% of LoCoMo questions name a period: alone it adds 1 point of R@5 (0.608 ->
    # 0.618); with the defaults 0 -> R@10 0.748, 0.2 -> 0.752, 0.4 -> 0.749. "What did I decide
    # in May?" is common in real use, and a record outside the period loses nothing.
    temporal_weight: float = Field(default=0.2, ge=0.0, le=1.0)
    # Events are told after they happen: a record dated up to this long after the period counts.
    temporal_lag_days: float = Field(default=7.0, ge=0.0, le=366.0)

    # Ranking -------------------------------------------------------------------------------
    # Recency breaks near-ties; the 0.3 cap in DESIGN §5 is a ceiling, not a target. LoCoMo
    # asks only about the past, so there 0.0 is best (R@5 0.605 vs 0.599 at 0.1, 0.573 at 0.3);
    # a living memory needs fresh confirmations to win ties, and 0.1 costs 0.006 of R@5.
    recency_weight: float = Field(default=0.1, ge=0.0, le=MAX_RECENCY_WEIGHT)
    # A month: last week's confirmation should count, last year's should barely register.
    recency_half_life_days: float = Field(default=30.0, gt=0.0, le=36_500.0)
    # User-stated (~0.9) outranks inferred (~0.5) on a tie, but confidence never dominates.
    confidence_multiplier_min: float = Field(default=0.85, gt=0.0, le=1.0)
    confidence_multiplier_max: float = Field(default=1.0, gt=0.0, le=1.0)

    # Dedup ---------------------------------------------------------------------------------
    # MiniLM paraphrases of one fact sit at ~0.85-0.95; distinct facts on a topic stay lower.
    # LoCoMo has few true paraphrases, so it shows only the cost: 0.9 drops 0.24 turns per
    # question and 0.4 points of R@10 (0.95: 0.01 and none; 0.85: 1.79 and 1.7 points). 0.9
    # is kept for what dedup is for: one-line facts restated in other words collapse.
    dedup_cosine: float = Field(default=0.9, ge=0.0, le=1.0)
    # For rows without a vector: near-verbatim token sets only (a rewording survives).
    dedup_jaccard: float = Field(default=0.8, ge=0.0, le=1.0)
    # Untrusted rows collapse harder (issue 17, crowding): reworded copies of one planted
    # instruction sit well above 0.75 in MiniLM, and half their words in common is a copy.
    untrusted_dedup_cosine: float = Field(default=0.75, ge=0.0, le=1.0)
    untrusted_dedup_jaccard: float = Field(default=0.5, ge=0.0, le=1.0)
    # When any trusted candidate exists, untrusted entries take at most this share of the
    # block: of its entries (top_k) and of its bytes. 0 shows no untrusted entry beside a
    # trusted one; 1 turns the cap off. With no trusted candidate, untrusted ones fill it.
    max_untrusted_share: float = Field(default=0.5, ge=0.0, le=1.0)

    # Budget --------------------------------------------------------------------------------
    # A fact is one line; ~480 bytes is three sentences, under the tool's 2000-byte cap.
    max_entry_bytes: int = Field(default=480, ge=16, le=16_000)
    # ~1,400 tokens at 3 bytes/token, under 1% of a 200k context: 8 one-line facts of ~250
    # bytes with their ~90-byte labels, or 6 entries at the full max_entry_bytes.
    max_block_bytes: int = Field(default=4096, ge=1, le=1_000_000)
    # Optional: at most this share of the model's context window (both or neither).
    context_share: float | None = Field(default=None, gt=0.0, le=1.0)
    context_window_tokens: int | None = Field(default=None, ge=1, le=10_000_000)
    # Tokens are estimated as ceil(bytes / bytes_per_token): 3 overcounts English BPE (~4).
    bytes_per_token: int = Field(default=3, ge=1, le=8)

    @model_validator(mode="after")
    def _knobs_agree(self) -> Self:
        if self.confidence_multiplier_min > self.confidence_multiplier_max:
            raise ValueError("confidence_multiplier_min must not exceed confidence_multiplier_max")
        if (self.context_share is None) != (self.context_window_tokens is None):
            raise ValueError("set context_share and context_window_tokens together, or neither")
        if self.block_byte_limit < frame_bytes():
            raise ValueError(
                f"the block budget ({self.block_byte_limit} bytes) cannot hold the fixed "
                f"heading and caveat ({frame_bytes()} bytes); raise max_block_bytes or the "
                "token budget"
            )
        return self

    @property
    def token_budget(self) -> int | None:
        """Tokens the block may use, from the context share, or ``None`` without one."""
        if self.context_share is None or self.context_window_tokens is None:
            return None
        return math.floor(self.context_share * self.context_window_tokens)

    @property
    def block_byte_limit(self) -> int:
        """The rendered block's byte ceiling: the byte budget and the token budget, whichever
        is tighter (``ceil(bytes / bytes_per_token) <= tokens`` iff ``bytes <= tokens * bpt``)."""
        tokens = self.token_budget
        if tokens is None:
            return self.max_block_bytes
        return min(self.max_block_bytes, tokens * self.bytes_per_token)

    @property
    def material_relevance_ratio(self) -> float:
        """If relevance(A) > ratio x relevance(B), A outranks B whatever recency and confidence.

        A score is relevance x f with f in [(1-w)·c_min, (1-w)·c_max + w] (see ``ranking``);
        the ratio is the widest spread of f, so the bound holds for every record pair.
        """
        w = self.recency_weight
        low = (1 - w) * self.confidence_multiplier_min
        high = (1 - w) * self.confidence_multiplier_max + w
        return high / low

    def knobs(self) -> dict[str, float | int | str | None]:
        """Every knob by name, as the journal stores it and ``RecallPolicy(**knobs)`` reads it
        (worked out once per policy object: every journalled recall asks)."""
        kept = _KNOBS.get(id(self))
        if kept is None or kept[0]() is not self:
            kept = (weakref.ref(self), dict(self.model_dump()))
            if len(_KNOBS) >= _KEPT_KNOBS:
                _KNOBS.clear()
            _KNOBS[id(self)] = kept
        return dict(kept[1])


# Each policy object's knobs, by identity: the weak reference makes sure the object asking is
# the one they were read from (an id is reused once its object is gone), so neither a later
# policy nor a copy with other knobs (``model_copy``) ever reads another policy's.
_KNOBS: dict[int, tuple[weakref.ref[RecallPolicy], dict[str, float | int | str | None]]] = {}
_KEPT_KNOBS = 64


DEFAULT_POLICY = RecallPolicy()
