"""Every knob of extraction and formation, each with the reason for its default."""

from __future__ import annotations

from pydantic import Field

from cairn.model_request import MAX_OUTPUT_TOKENS, MAX_TIMEOUT_SECONDS
from cairn.models import Frozen


class ExtractionPolicy(Frozen):
    """Bounds of every model call of an extraction and the thresholds formation decides by."""

    # Model calls ---------------------------------------------------------------------------
    # 16 one-line candidates with labels fit in ~1,500 tokens; 2,048 leaves headroom.
    max_output_tokens: int = Field(default=2048, ge=256, le=MAX_OUTPUT_TOKENS)
    # Bedrock's and botocore's default read timeout; a slower answer is retried by the queue.
    timeout_seconds: float = Field(default=60.0, gt=0.0, le=MAX_TIMEOUT_SECONDS)
    # Extraction is transcription, not writing: no sampling.
    temperature: float = Field(default=0.0, ge=0.0, le=1.0)
    # The request JSON of one call, as DESIGN §6 bounds consolidation's: texts are shortened
    # progressively to fit, and no alias is ever dropped.
    max_prompt_bytes: int = Field(default=60_000, ge=4_000, le=300_000)

    # Candidates ----------------------------------------------------------------------------
    # DESIGN §4: user-stated outranks inferred. What a model extracted is inferred, however
    # sure the model says it is; the cli files a user-stated record at 0.9.
    inferred_confidence_cap: float = Field(default=0.7, ge=0.0, le=1.0)

    # Neighbours ----------------------------------------------------------------------------
    # Live records of the namespace shown to the judge per candidate.
    max_neighbours: int = Field(default=5, ge=1, le=16)
    # Related enough to show the judge: the recall relevance floor (LoCoMo-tuned, MiniLM).
    related_cosine: float = Field(default=0.3, ge=0.0, le=1.0)
    # Without vectors: a fifth of the content words (stemmed, stopwords dropped) in common.
    related_jaccard: float = Field(default=0.2, ge=0.0, le=1.0)
    # Heads without a stored vector embedded on the fly (one CPU batch of MiniLM is ~0.3 s);
    # the rest are compared by keywords. The ones sharing most words with a candidate go first.
    max_reembed: int = Field(default=64, ge=0, le=1000)

    # Fold-in (near-exact repeat, decided without the model) -------------------------------
    # MiniLM paraphrases sit at 0.85-0.95 (recall's dedup uses 0.9); a fold-in keeps the old
    # words, so only a near-verbatim repeat qualifies: 0.95, and only with the same negations.
    fold_in_cosine: float = Field(default=0.95, ge=0.5, le=1.0)
    # Without vectors: the same words (negations included) but for an article or two.
    fold_in_jaccard: float = Field(default=0.85, ge=0.5, le=1.0)


DEFAULT_EXTRACTION_POLICY = ExtractionPolicy()
