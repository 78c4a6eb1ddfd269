"""``BedrockEmbedder``: Amazon Titan Text Embeddings V2 through an injected bedrock-runtime client.

Shapes (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-text.html):
the ``InvokeModel`` body is ``{"inputText", "dimensions", "normalize"}`` and the answer's body is
``{"embedding", "inputTextTokenCount"}``. Titan v2 embeds one text per ``InvokeModel`` call and
has no batch form of it (Bedrock's batch inference is an asynchronous S3-to-S3 job, for bulk
indexing), so ``embed`` makes one call per text, in order: n texts cost n calls.

Bounds:

- Length: a text is cut to ``max_chars`` (default 8,192) before it is sent. The model takes at
  most 8,192 tokens or 50,000 characters, and a token covers at least one character of ordinary
  text, so the cut keeps a call inside both limits. A text that is empty after trimming is not
  sent at all: its row is zeros (cosine 0 with everything), as ``HashingEmbedder`` does.
- Time: botocore has no per-call timeout, so the bound is the client's read timeout, exactly as
  for ``cairn.llm.bedrock.BedrockModel``: build the client with
  ``cairn.llm.bedrock.bedrock_runtime_client(timeout_seconds=...)`` (botocore retries off). A
  client that would wait longer than ``timeout_seconds`` is refused when the embedder is built;
  ``embed`` of n texts then takes at most n times that bound.

Errors are translated by code, once, by ``cairn.llm.bedrock.translated`` (``InvokeModel``
reports the same codes as Converse): throttled or unavailable -> ``ModelUnavailableError`` and a
model timeout -> ``ModelTimeoutError`` (both retryable); any other refusal ->
``ModelRejectedError``; an answer that is not an embedding of the asked width ->
``InvalidModelOutputError``. Texts are never logged or quoted in an error.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from botocore.exceptions import BotoCoreError, ClientError, ConnectTimeoutError, ReadTimeoutError

from cairn.errors import (
    ConfigurationError,
    InvalidModelOutputError,
    ModelTimeoutError,
    ModelUnavailableError,
)
from cairn.llm.bedrock import translated
from cairn.models import EmbedderId
from cairn.ports import FloatMatrix, FloatVector

MODEL_ID = "amazon.titan-embed-text-v2:0"
DIMS = 1024
SUPPORTED_DIMS = (256, 512, 1024)  # the only widths Titan v2 accepts
MAX_TEXT_CHARS = 8_192
MODEL_MAX_CHARS = 50_000  # the model's own character limit; max_chars may not exceed it
DEFAULT_TIMEOUT_SECONDS = 10.0


class BedrockEmbedder:
    """Titan Text Embeddings V2 vectors: ``dims`` wide (256, 512 or 1024), float32, unit norm
    (zeros for an empty text), identity ``EmbedderId(model_id, dims)``; one call per text.

    ``normalize`` is passed to Titan; rows are scaled to unit length here either way, because
    the ``Embedder`` port promises unit rows.
    """

    def __init__(
        self,
        client: Any,
        *,
        model_id: str = MODEL_ID,
        dims: int = DIMS,
        normalize: bool = True,
        max_chars: int = MAX_TEXT_CHARS,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> None:
        if dims not in SUPPORTED_DIMS:
            raise ConfigurationError(
                f"Titan Text Embeddings V2 makes vectors of {', '.join(map(str, SUPPORTED_DIMS))} "
                f"dimensions, not {dims}; choose one of those"
            )
        if not 1 <= max_chars <= MODEL_MAX_CHARS:
            raise ConfigurationError(
                f"max_chars must be between 1 and {MODEL_MAX_CHARS:,} (the model's limit), "
                f"not {max_chars}"
            )
        _check_time_bound(client, timeout_seconds)
        self._client = client
        self._identity = EmbedderId(model_id=model_id, dims=dims)
        self._normalize = normalize
        self._max_chars = max_chars
        self._timeout_seconds = timeout_seconds
        self._lock = threading.Lock()
        self._calls = 0
        self._input_tokens = 0

    @property
    def identity(self) -> EmbedderId:
        return self._identity

    @property
    def calls(self) -> int:
        """``InvokeModel`` calls that returned an embedding, over this embedder's life."""
        return self._calls

    @property
    def input_tokens(self) -> int:
        """Input tokens Titan counted (what Bedrock bills), over this embedder's life."""
        return self._input_tokens

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """One unit-norm float32 row per text (zeros for an empty text), shape
        ``(len(texts), dims)``, in input order; one ``InvokeModel`` call per non-empty text."""
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not a single str")
        out = np.zeros((len(texts), self._identity.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            trimmed = text.strip()[: self._max_chars]
            if trimmed:
                out[row] = self._embed_one(trimmed)
        return out

    def _embed_one(self, text: str) -> FloatVector:
        body = json.dumps(
            {"inputText": text, "dimensions": self._identity.dims, "normalize": self._normalize}
        )
        try:
            answer = self._client.invoke_model(
                modelId=self._identity.model_id,
                body=body,
                contentType="application/json",
                accept="application/json",
            )
            raw = answer["body"].read()
        except ClientError as exc:
            raise translated(exc) from exc
        except (ReadTimeoutError, ConnectTimeoutError) as exc:
            raise ModelTimeoutError(
                f"Bedrock did not return an embedding within {self._timeout_seconds:g} s; "
                "the call can be retried"
            ) from exc
        except BotoCoreError as exc:
            raise ModelUnavailableError(
                f"Bedrock could not be reached ({type(exc).__name__}); the call can be retried"
            ) from exc
        vector, tokens = _parsed(raw, self._identity)
        with self._lock:
            self._calls += 1
            self._input_tokens += tokens
        return vector


def _check_time_bound(client: Any, timeout_seconds: float) -> None:
    config = getattr(getattr(client, "meta", None), "config", None)
    read_timeout = getattr(config, "read_timeout", None)
    if read_timeout is not None and read_timeout > timeout_seconds:
        raise ConfigurationError(
            f"the bedrock-runtime client waits {read_timeout:g} s for an answer, longer than the "
            f"embedder's {timeout_seconds:g} s bound; build the client with "
            "cairn.llm.bedrock.bedrock_runtime_client(timeout_seconds=...)"
        )


def _parsed(raw: bytes, identity: EmbedderId) -> tuple[FloatVector, int]:
    """The unit vector and token count in a Titan v2 answer; ``InvalidModelOutputError`` if the
    answer is not JSON, has no embedding, or its embedding is not ``identity.dims`` finite
    numbers."""
    try:
        payload = json.loads(raw)
    except ValueError as exc:
        raise InvalidModelOutputError("the embedding answer is not JSON") from exc
    embedding = payload.get("embedding") if isinstance(payload, dict) else None
    if not isinstance(embedding, list):
        raise InvalidModelOutputError("the embedding answer has no 'embedding' list")
    if len(embedding) != identity.dims:
        raise InvalidModelOutputError(
            f"the embedding has {len(embedding)} values, not {identity.dims}; check that model "
            f"id {identity.model_id!r} is Titan Text Embeddings V2"
        )
    # numpy would quietly turn None into NaN and "0.5" into 0.5: check the JSON types first.
    if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in embedding):
        raise InvalidModelOutputError("the embedding holds values that are not numbers")
    vector = np.asarray(embedding, dtype=np.float32)
    if not np.isfinite(vector).all():
        raise InvalidModelOutputError("the embedding holds values that are not finite")
    norm = float(np.linalg.norm(vector))
    unit: FloatVector = vector / norm if norm > 0 else vector
    tokens = payload.get("inputTextTokenCount")
    return unit, tokens if isinstance(tokens, int) and tokens >= 0 else 0
