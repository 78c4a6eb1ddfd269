"""RetrieveMemoryRecords answers as the service does, through the real boto3 client.

The service ranks and returns the ``topK`` most relevant records whatever their similarity,
with ``score`` the cosine of record and query; a relevance bar is the client's (the SDK's
Strands ``RetrievalConfig.relevance_score`` filters on ``score``). Metadata filters narrow the
records before ranking, so a match ranked below a hundred others is still found.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from cairn.embed.onnx import OnnxEmbedder

NOTES = "/notes/"  # no strategy template names an actor here: the memory-wide scope
NOUNS = tuple(
    " ".join(
        (
            "anchor bicycle candle desert engine forest guitar harbor island jacket kettle",
            "ladder meadow needle orchard pencil quarry river saddle tunnel umbrella valley",
            "window yacht zipper acorn bridge castle dolphin eagle falcon glacier hammer igloo",
            "jungle kayak lantern magnet nest ocean parrot quilt rocket sailor tiger unicorn",
            "violin walrus xylophone yogurt zebra alley barrel cactus drum elbow fountain",
            "garden helmet ink jewel",
        )
    ).split(" ")
)
assert len(NOUNS) == 61


def _create(client: Any, memory_id: str, rows: list[tuple[str, dict[str, Any]]]) -> list[str]:
    ids: list[str] = []
    for start in range(0, len(rows), 100):  # the model's 100 records a call
        records = [
            {
                "requestIdentifier": f"r{start + i}",
                "namespaces": [NOTES],
                "content": {"text": text},
                "timestamp": 1_767_258_000,
                **({"metadata": metadata} if metadata else {}),
            }
            for i, (text, metadata) in enumerate(rows[start : start + 100])
        ]
        answer = client.batch_create_memory_records(memoryId=memory_id, records=records)
        assert answer["failedRecords"] == []
        by_request = {
            r["requestIdentifier"]: r["memoryRecordId"] for r in answer["successfulRecords"]
        }
        ids += [by_request[f"r{start + i}"] for i in range(len(records))]
    return ids


def _cosine(embedder: OnnxEmbedder, query: str, text: str) -> float:
    a, b = (np.asarray(v, dtype=np.float64) for v in embedder.embed([query, text]))
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_retrieve_returns_the_top_k_whatever_their_similarity_scored_by_cosine(
    data_plane: Any, memory: dict[str, Any]
) -> None:
    # No word in common with the query, and cosines of 0.04 and 0.01 (MiniLM): under recall's
    # floors (0.3, and 0.2 for a weak block), where the service still ranks and returns them.
    texts = ("The user keeps bees on the roof", "The user visited Lisbon in spring")
    opposite = "The user has a dog named Biscuit"  # cosine -0.01: opposite, left out
    ids = _create(data_plane, memory["id"], [(t, {}) for t in (*texts, opposite)])
    query = "developer preferences"

    found = data_plane.retrieve_memory_records(
        memoryId=memory["id"], namespace=NOTES, searchCriteria={"searchQuery": query, "topK": 5}
    )["memoryRecordSummaries"]

    embedder = OnnxEmbedder()
    assert [r["memoryRecordId"] for r in found] == ids[:2]
    for row, text in zip(found, texts, strict=True):
        assert row["score"] == pytest.approx(_cosine(embedder, query, text), abs=1e-5)
    assert [r["score"] for r in found] == sorted((r["score"] for r in found), reverse=True)


def test_a_metadata_filter_finds_a_match_ranked_below_the_hundred_best(
    data_plane: Any, memory: dict[str, Any]
) -> None:
    # 122 records that match "tea" in words and meaning, mutually distinct enough to survive
    # paraphrase dedup, and one unrelated record: the only one the filter accepts, 123rd by
    # relevance, so a filter applied to the 100 best of the scope would never see it.
    rows: list[tuple[str, dict[str, Any]]] = [
        (f"tea {NOUNS[i]} {NOUNS[(i + d) % 61]} {NOUNS[(i + 3 * d) % 61]}", {})
        for d in (1, 7)
        for i in range(61)
    ]
    rows.append(("The user keeps bees on the roof", {"colour": {"stringValue": "blue"}}))
    ids = _create(data_plane, memory["id"], rows)
    blue = {
        "left": {"metadataKey": "colour"},
        "operator": "EQUALS_TO",
        "right": {"metadataValue": {"stringValue": "blue"}},
    }

    unfiltered = data_plane.retrieve_memory_records(
        memoryId=memory["id"], namespace=NOTES, searchCriteria={"searchQuery": "tea", "topK": 100}
    )["memoryRecordSummaries"]
    filtered = data_plane.retrieve_memory_records(
        memoryId=memory["id"],
        namespace=NOTES,
        searchCriteria={"searchQuery": "tea", "topK": 100, "metadataFilters": [blue]},
    )["memoryRecordSummaries"]

    assert len(unfiltered) == 100
    assert ids[-1] not in {r["memoryRecordId"] for r in unfiltered}
    assert [r["memoryRecordId"] for r in filtered] == [ids[-1]]
    assert filtered[0]["metadata"] == {"colour": {"stringValue": "blue"}}
