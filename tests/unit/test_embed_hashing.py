"""HashingEmbedder: the deterministic test-only embedder behaves like an embedder should."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from cairn.embed.hashing import HashingEmbedder
from cairn.ports import Embedder


def test_rows_are_unit_norm_float32_of_the_declared_width() -> None:
    embedder = HashingEmbedder(dims=64)
    vectors = embedder.embed(["the user likes tea", "stock markets fell sharply"])
    assert vectors.shape == (2, 64)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)


def test_identity_names_the_hashing_space_and_width() -> None:
    embedder = HashingEmbedder(dims=128)
    assert embedder.identity.model_id == "cairn-hashing-v1"
    assert embedder.identity.dims == 128
    assert isinstance(embedder, Embedder)


@pytest.mark.parametrize("text", ["", "   ", "?!…", "\n\t"])
def test_text_without_words_gives_a_zero_row_not_nan(text: str) -> None:
    vectors = HashingEmbedder().embed([text, "tea"])
    assert np.isfinite(vectors).all()
    assert not vectors[0].any()
    assert np.linalg.norm(vectors[1]) == pytest.approx(1.0, rel=1e-5)


def test_empty_input_gives_an_empty_matrix() -> None:
    assert HashingEmbedder(dims=32).embed([]).shape == (0, 32)


def test_shared_words_are_closer_than_unrelated_text() -> None:
    query, related, unrelated = HashingEmbedder().embed(
        ["Does the user like green tea?", "The user likes green tea", "Stock markets fell"]
    )
    assert float(query @ related) > float(query @ unrelated) + 0.2


def test_case_is_ignored() -> None:
    lower, upper = HashingEmbedder().embed(["the user likes tea", "THE USER LIKES TEA"])
    np.testing.assert_array_equal(lower, upper)


def test_vectors_are_identical_in_another_process() -> None:
    # Python salts str hashes per process; the embedder must not depend on that salt.
    script = (
        "from cairn.embed.hashing import HashingEmbedder;"
        "print(HashingEmbedder(32).embed(['persistent memory for agents'])[0].tobytes().hex())"
    )
    env_salted = {**os.environ, "PYTHONHASHSEED": "12345"}
    result = subprocess.run(  # noqa: S603 - our own interpreter, a fixed script
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env_salted
    )
    here = HashingEmbedder(32).embed(["persistent memory for agents"])[0].tobytes().hex()
    assert result.stdout.strip() == here
