"""The baseline retrievers: BM25, cosine over MiniLM vectors, and their reciprocal-rank fusion.

Each ranks the turns of one conversation for each of its questions and returns, per question,
the dia_ids of the best ``depth`` turns, best first. One index per conversation, as in LoCoMo.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from benchmarks.bm25 import BM25
from benchmarks.locomo import Conversation
from cairn.ports import FloatMatrix

DEPTH = 20
RRF_K = 60


@dataclass(frozen=True)
class Prepared:
    """A conversation with its turn and question vectors, rows in the conversation's order."""

    conversation: Conversation
    turn_vectors: FloatMatrix
    question_vectors: FloatMatrix

    @property
    def dia_ids(self) -> list[str]:
        return [turn.dia_id for turn in self.conversation.turns]


Retriever = Callable[[Prepared], list[list[str]]]


def _top(scores: npt.NDArray[np.floating], ids: list[str], depth: int) -> list[str]:
    # Stable sort: equal scores keep conversation order, so runs are reproducible.
    order = np.argsort(-scores, kind="stable")[:depth]
    return [ids[i] for i in order]


def _bm25_matrix(prepared: Prepared) -> npt.NDArray[np.float32]:
    index = BM25([turn.indexed_text for turn in prepared.conversation.turns])
    return np.vstack([index.scores(q.text) for q in prepared.conversation.questions])


def rank_bm25(prepared: Prepared, depth: int = DEPTH) -> list[list[str]]:
    ids = prepared.dia_ids
    return [_top(row, ids, depth) for row in _bm25_matrix(prepared)]


def rank_cosine(prepared: Prepared, depth: int = DEPTH) -> list[list[str]]:
    ids = prepared.dia_ids
    similarity = prepared.question_vectors @ prepared.turn_vectors.T
    return [_top(row, ids, depth) for row in similarity]


def _reciprocal_ranks(scores: npt.NDArray[np.floating], k: int) -> npt.NDArray[np.float64]:
    ranks = np.empty(len(scores), dtype=np.float64)
    ranks[np.argsort(-scores, kind="stable")] = np.arange(1, len(scores) + 1)
    return 1.0 / (k + ranks)


def rank_fusion(prepared: Prepared, depth: int = DEPTH, k: int = RRF_K) -> list[list[str]]:
    """Reciprocal-rank fusion (Cormack et al., 2009) of BM25 and cosine, constant ``k``."""
    ids = prepared.dia_ids
    similarity = prepared.question_vectors @ prepared.turn_vectors.T
    fused = [
        _reciprocal_ranks(keyword, k) + _reciprocal_ranks(semantic, k)
        for keyword, semantic in zip(_bm25_matrix(prepared), similarity, strict=True)
    ]
    return [_top(row, ids, depth) for row in fused]
