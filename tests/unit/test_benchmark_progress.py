"""The benchmark's long steps show a bar of counts on a terminal, nothing in a pipe or with
--quiet, and embedding in steps gives exactly the vectors of one call."""

from __future__ import annotations

import io

import numpy as np
import pytest

from benchmarks.progress import bar
from benchmarks.vectors import STEP, embed_in_steps
from cairn.testing import HashingEmbedder


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _texts(n: int) -> list[str]:
    # Lengths vary, so the embedder's shortest-first batching matters.
    return [f"turn {i}: " + "private words " * (i % 17) for i in range(n)]


@pytest.mark.onnx
def test_embedding_in_steps_gives_exactly_the_vectors_of_one_call() -> None:
    from cairn.embed.onnx import OnnxEmbedder

    embedder = OnnxEmbedder()
    texts = _texts(STEP + 45)
    stepped = embed_in_steps(embedder, texts, quiet=True)
    assert np.array_equal(stepped, embedder.embed(texts))


def test_a_terminal_shows_counts_never_content_and_quiet_or_a_pipe_shows_nothing() -> None:
    texts = _texts(2 * STEP + 3)
    screen = Terminal()
    embed_in_steps(HashingEmbedder(), texts, label="embedding turns", stream=screen)
    drawn = screen.getvalue()
    assert "embedding turns" in drawn
    assert f"{STEP}/{len(texts)}" in drawn
    assert "private" not in drawn

    hushed, pipe = Terminal(), io.StringIO()
    embed_in_steps(HashingEmbedder(), texts, quiet=True, stream=hushed)
    embed_in_steps(HashingEmbedder(), texts, stream=pipe)
    assert hushed.getvalue() == pipe.getvalue() == ""


def test_the_policy_sweep_bar_counts_questions() -> None:
    screen = Terminal()
    with bar(3, "recall under every policy", "question", quiet=False, stream=screen) as shown:
        shown.update(3)
    assert "3/3" in screen.getvalue()
