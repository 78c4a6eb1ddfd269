"""Embedding the benchmark's texts once, with an optional cache outside the repository.

Texts are embedded in steps of ``STEP`` with a bar on a terminal (``benchmarks.progress``); the
steps follow the embedder's own order (shortest first) in multiples of its batch, so every
batch, and so every vector, is exactly what one call over all the texts gives.

The cache lives in the system temp directory, keyed by the embedder's identity and a digest of
every text, so a changed model, data file or turn format never reuses stale vectors. It holds
data-derived values: it must never be written inside the repository.
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

import numpy as np

from benchmarks.progress import bar
from cairn.embed.onnx import DEFAULT_BATCH_SIZE
from cairn.ports import Embedder, FloatMatrix

STEP = 8 * DEFAULT_BATCH_SIZE

CACHE_DIR = Path(tempfile.gettempdir()) / "cairn-bench-vectors"


def _cache_key(embedder: Embedder, texts: Sequence[str]) -> str:
    digest = hashlib.sha256(embedder.identity.key.encode())
    for text in texts:
        digest.update(b"\x00" + text.encode("utf-8"))
    return digest.hexdigest()[:32]


def embed_in_steps(
    embedder: Embedder,
    texts: Sequence[str],
    *,
    label: str = "embedding",
    quiet: bool = False,
    stream: TextIO | None = None,
) -> FloatMatrix:
    """``embedder.embed(texts)``, in steps of ``STEP`` texts, shortest first, with a bar."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.zeros((len(texts), embedder.identity.dims), dtype=np.float32)
    with bar(len(texts), label, "text", quiet=quiet, stream=stream) as shown:
        for start in range(0, len(order), STEP):
            chunk = order[start : start + STEP]
            out[chunk] = embedder.embed([texts[i] for i in chunk])
            shown.update(len(chunk))
    return out


def embed_all(
    embedder: Embedder,
    texts: Sequence[str],
    *,
    use_cache: bool,
    label: str = "embedding",
    quiet: bool = False,
) -> tuple[FloatMatrix, float | None]:
    """Vectors for ``texts`` and the seconds spent embedding (``None`` when read from cache)."""
    path = CACHE_DIR / f"{_cache_key(embedder, texts)}.npy"
    if use_cache and path.is_file():
        cached: FloatMatrix = np.load(path)
        if cached.shape == (len(texts), embedder.identity.dims):
            return cached, None
    started = time.perf_counter()
    vectors = embed_in_steps(embedder, texts, label=label, quiet=quiet)
    elapsed = time.perf_counter() - started
    if use_cache:
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        np.save(path, vectors)
    return vectors, elapsed
