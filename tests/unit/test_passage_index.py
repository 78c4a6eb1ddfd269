"""The passage index embeds each passage once, however callers alternate what they list."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from cairn.models import EmbedderId, Scope
from cairn.ports import FloatMatrix
from cairn.recall.index.passages import Passage, PassageIndex
from cairn.recall.query import DEFAULT_POLICY
from cairn.testing import HashingEmbedder

SCOPE = Scope(memory_id="m1", actor_id="a1")
AT = datetime(2023, 5, 1, tzinfo=UTC)


class CountingEmbedder:
    """The hashing embedder, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        self._inner = HashingEmbedder()
        self.texts = 0

    @property
    def identity(self) -> EmbedderId:
        return self._inner.identity

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        self.texts += len(texts)
        return self._inner.embed(texts)


def passage(ref: str, text: str) -> Passage:
    return Passage(ref, AT, AT, text)


def test_alternating_lists_embed_each_passage_once_and_a_changed_text_again() -> None:
    turns = [passage(f"ev-{i}", f"we talked about the garden {i}") for i in range(5)]
    chunks = [passage("L1-00000001-00000005", "topics: garden")]
    embedder = CountingEmbedder()
    index = PassageIndex()
    for listed in (turns, turns + chunks, turns, turns + chunks):
        found = index.search(SCOPE, listed, "garden", embedder=embedder, policy=DEFAULT_POLICY)
        assert len(found) == len(listed)
    assert embedder.texts == 6 + 4  # each passage once, and the four queries

    changed = [*turns[:4], passage("ev-4", "something else entirely: stocks")]
    found = index.search(SCOPE, changed, "stocks", embedder=embedder, policy=DEFAULT_POLICY)
    assert embedder.texts == 10 + 1 + 1  # the new text under an old id, and the query
    assert found[0].position == 4


@pytest.mark.onnx
def test_embedding_passages_with_someone_listening_reports_steps_and_gives_the_same_bits() -> None:
    from cairn.embed.onnx import OnnxEmbedder
    from cairn.recall.index.progress import reporting

    # Lengths vary, so the embedder's shortest-first batching matters.
    turns = [passage(f"ev-{i}", f"turn {i} about " + "the garden " * (i % 13)) for i in range(150)]
    embedder = OnnxEmbedder()
    quiet = PassageIndex().search(SCOPE, turns, "garden", embedder=embedder, policy=DEFAULT_POLICY)
    heard: list[tuple[int, int]] = []
    with reporting(lambda d, t: None, embedding=lambda d, t: heard.append((d, t))):
        told = PassageIndex().search(
            SCOPE, turns, "garden", embedder=embedder, policy=DEFAULT_POLICY
        )
    assert told == quiet  # the same vectors, so the same relevance to the bit
    assert heard[-1] == (150, 150)
    assert len(heard) > 1
    assert [d for d, _ in heard] == sorted(d for d, _ in heard)
