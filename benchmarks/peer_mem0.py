"""A peer side by side: mem0 OSS and cairn on LoCoMo, ``python -m benchmarks.peer_mem0``.

Both index the same turns (``[session date] speaker: text``) with the same MiniLM ONNX vectors
and answer the same questions, embedding each question live with the same ONNX model; R@k and
per-query latency are measured in the same run. mem0 runs fully offline: its default local
vector store (Qdrant in local mode, in a temporary directory), ``add(..., infer=False)`` one turn
per call (no LLM extraction), ``search(top_k=20)`` with its other defaults. What mem0 cannot do
offline, and why, is in ``OFFLINE_NOTES``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks import report
from benchmarks.engine import build_index, recall_wide
from benchmarks.locomo import default_data_path
from benchmarks.peer_report import PeerRun, render_peer
from benchmarks.quality import prepare
from benchmarks.retrieval import DEPTH, Prepared, rank_cosine
from benchmarks.scoring import judge
from cairn.embed.onnx import OnnxEmbedder
from cairn.recall import DEFAULT_POLICY

# Nothing mem0 does may leave the machine: no telemetry, and its (never used) OpenAI clients
# point at a closed loopback port, so a stray call fails at once instead of reaching a network.
_OFFLINE_BASE_URL = "http://127.0.0.1:9/v1"


def mem0_memory(workdir: Path, onnx: OnnxEmbedder, known: dict[str, Any]) -> Any:
    """A mem0 ``Memory`` with its defaults but offline, embedding with cairn's ONNX model."""
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ["MEM0_DIR"] = str(workdir / "mem0-home")
    # mem0 ships no type information; it is a benchmark-only peer, typed as Any here.
    from mem0 import Memory  # type: ignore[import-untyped]
    from mem0.configs.base import MemoryConfig  # type: ignore[import-untyped]
    from mem0.embeddings.base import EmbeddingBase  # type: ignore[import-untyped]

    class CairnOnnxEmbedding(EmbeddingBase):  # type: ignore[misc]
        """cairn's ONNX MiniLM behind mem0's embedder interface; turns already embedded for
        cairn are served from those vectors, anything else is embedded live."""

        def embed(self, text: Any, memory_action: Any = None) -> list[float]:
            cached = known.get(text)
            if cached is not None:
                return list(cached)
            return [float(x) for x in onnx.embed([str(text)])[0]]

        def embed_batch(self, texts: Any, memory_action: Any = "add") -> list[list[float]]:
            return [self.embed(text, memory_action) for text in texts]

    offline = {"api_key": "offline-unused", "openai_base_url": _OFFLINE_BASE_URL}
    config = MemoryConfig(
        vector_store={
            "provider": "qdrant",
            "config": {
                "path": str(workdir / "qdrant"),
                "collection_name": "locomo",
                "embedding_model_dims": onnx.identity.dims,
            },
        },
        embedder={"provider": "openai", "config": {**offline, "embedding_dims": 384}},
        llm={"provider": "openai", "config": offline},
        history_db_path=str(workdir / "history.db"),
    )
    memory = Memory(config)
    # mem0's config accepts only its named providers; its own embedder is swapped for ours.
    memory.embedding_model = CairnOnnxEmbedding()
    return memory


def _index_mem0(memory: Any, item: Prepared, user_id: str) -> float:
    started = time.perf_counter()
    for turn in item.conversation.turns:
        memory.add(
            [{"role": "user", "content": turn.indexed_text}],
            user_id=user_id,
            infer=False,
            metadata={"dia_id": turn.dia_id},
        )
    return time.perf_counter() - started


def _search_mem0(memory: Any, question: str, user_id: str) -> list[str]:
    found = memory.search(question, filters={"user_id": user_id}, top_k=DEPTH)
    return [hit["metadata"]["dia_id"] for hit in found["results"]]


def measure(prepared: Sequence[Prepared], workdir: Path) -> PeerRun:
    onnx = OnnxEmbedder()
    known = {
        turn.indexed_text: [float(x) for x in row]
        for item in prepared
        for turn, row in zip(item.conversation.turns, item.turn_vectors, strict=True)
    }
    memory = mem0_memory(workdir, onnx, known)
    run = PeerRun(mem0_version=metadata.version("mem0ai"))
    for item in prepared:
        user_id = f"locomo-{item.conversation.sample_id}"
        run.mem0_add_seconds += _index_mem0(memory, item, user_id)
        run.turns += len(item.conversation.turns)
        index = build_index(item, onnx)
        cosine = rank_cosine(item)
        for question, ranked in zip(item.conversation.questions, cosine, strict=True):
            run.cosine.append(judge(question, ranked))
            began = time.perf_counter()
            mem0_ids = _search_mem0(memory, question.text, user_id)
            run.mem0_ms.append((time.perf_counter() - began) * 1000)
            run.mem0.append(judge(question, mem0_ids))
            began = time.perf_counter()
            shown = recall_wide(index, question.text, onnx, DEFAULT_POLICY, DEPTH)
            run.cairn_ms.append((time.perf_counter() - began) * 1000)
            run.cairn.append(
                judge(question, [index.dia_ids[e.version.record_id] for e in shown.entries])
            )
    return run


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peer_mem0", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="one conversation; writes nothing")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    try:
        metadata.version("mem0ai")
    except metadata.PackageNotFoundError:
        print(
            "mem0ai is not installed: make bench installs benchmarks/requirements.txt",
            file=sys.stderr,
        )
        return 2
    started = time.perf_counter()
    prepared, _, facts = prepare(default_data_path(), quick=args.quick, use_cache=True)
    with tempfile.TemporaryDirectory(prefix="cairn-peer-") as workdir:
        run = measure(prepared, Path(workdir))
    run.seconds = time.perf_counter() - started
    run.data = facts["data"]
    given = list(sys.argv[1:] if argv is None else argv)
    run.command = " ".join(["python -m benchmarks.peer_mem0", *given])
    run.date = f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    markdown = render_peer(run)
    print(markdown)
    if not (args.quick or args.no_write):
        report.write_section(markdown, "peer_mem0")
        print(f"\nwritten to {report.DOCS_PATH}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
