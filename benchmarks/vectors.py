"""Embedding the benchmark's texts once, with an optional cache outside the repository.

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

import numpy as np

from cairn.ports import Embedder, FloatMatrix

CACHE_DIR = Path(tempfile.gettempdir()) / "cairn-bench-vectors"


def _cache_key(embedder: Embedder, texts: Sequence[str]) -> str:
    digest = hashlib.sha256(embedder.identity.key.encode())
    for text in texts:
        digest.update(b"\x00" + text.encode("utf-8"))
    return digest.hexdigest()[:32]


def embed_all(
    embedder: Embedder, texts: Sequence[str], *, use_cache: bool
) -> tuple[FloatMatrix, float | None]:
    """Vectors for ``texts`` and the seconds spent embedding (``None`` when read from cache)."""
    path = CACHE_DIR / f"{_cache_key(embedder, texts)}.npy"
    if use_cache and path.is_file():
        cached: FloatMatrix = np.load(path)
        if cached.shape == (len(texts), embedder.identity.dims):
            return cached, None
    started = time.perf_counter()
    vectors = embedder.embed(texts)
    elapsed = time.perf_counter() - started
    if use_cache:
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        np.save(path, vectors)
    return vectors, elapsed
