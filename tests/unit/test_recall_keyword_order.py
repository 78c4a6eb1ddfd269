"""BM25 and the query's term weight are the same doubles in every process, whatever its hash seed.

Float addition is not associative, so a sum over a query's terms taken in ``set`` order can
differ in its last bit between two processes (``PYTHONHASHSEED`` orders a set of strings). A
recall replayed in another process must score exactly as the one journaled, so the scan and the
recall index both add the terms in the order the query first names them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cairn.recall.keywords import query_terms

# Builds a store whose rows share many query terms at varied frequencies, then prints every
# score the scan and the index compute, as exact hex doubles: a row's line names its content
# (record ids, and so the rows' order, differ between processes), then the query's weight, then
# the passage index's keyword score and fused relevance of the same texts as passages.
_SCRIPT = """
from datetime import UTC, datetime
from cairn.changes import Create, NewRecord
from cairn.models import Scope, Source, SourceKind
from cairn.recall.candidates import gather
from cairn.recall.index import read_rows
from cairn.recall.index.passages import Passage, PassageIndex
from cairn.recall.index.scoring import bm25, query_weight as index_weight
from cairn.recall.index.snapshot import build_snapshot
from cairn.recall.keywords import tokenize
from cairn.recall.query import RecallPolicy, RecallQuery
from cairn.recall.relevance import query_weight as scan_weight
from cairn.testing import FixedClock, HashingEmbedder, InMemoryBackend

WORDS = "amber basil cedar delta ember fjord garnet harbor indigo juniper kelp lantern".split()
scope = Scope(memory_id="mem-order", actor_id="user-1")
stores = InMemoryBackend(FixedClock(datetime(2025, 8, 20, tzinfo=UTC))).stores()
for row in range(40):
    words = [w for j, w in enumerate(WORDS) for _ in range((row * (j + 3)) % 4)]
    content = " ".join(words + [f"filler{row % 7}"] * (row % 5)) or "empty row"
    record = NewRecord(namespace="/facts/user-1/", strategy="semantic", content=content,
                       sources=(Source(kind=SourceKind.USER),))
    stores.records.apply(scope, [Create(record=record)])
policy = RecallPolicy()
text = "lantern kelp juniper indigo harbor garnet fjord ember delta cedar basil amber"
pool = gather(scope, RecallQuery(text=text), records=stores.records, embedder=None, policy=policy)
snapshot = build_snapshot(read_rows(stores.records, scope, None), None)
view = snapshot.view(None, None)
index = [float(score) for score in bm25(snapshot, view, tokenize(text), policy)]
scan = [candidate.keyword for candidate in pool.candidates]
assert index == scan, "the index and the scan disagree"
weight = index_weight(snapshot, view, tokenize(text))
assert weight == scan_weight(pool, text), "the index and the scan weigh the query differently"
rows = zip(pool.candidates, scan, strict=True)
for line in sorted(f"{candidate.version.content}={score.hex()}" for candidate, score in rows):
    print(line.replace(" ", "_"))
print(weight.hex())
at = datetime(2025, 8, 20, tzinfo=UTC)
passages = [Passage(f"ev-{i}", at, at, c.version.content) for i, c in enumerate(pool.candidates)]
for kept in PassageIndex().search(scope, sorted(passages, key=lambda p: p.text), text,
                                  embedder=HashingEmbedder(), policy=policy):
    print(f"passage-{kept.position}={kept.keyword.hex()}/{kept.relevance.hex()}")
"""


def _scores_under(seed: str) -> list[str]:
    shared = Path(__file__).resolve().parents[2] / "shared"
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(shared)}
    result = subprocess.run(  # noqa: S603 - our own interpreter, a fixed script
        [sys.executable, "-c", _SCRIPT], capture_output=True, text=True, check=True, env=env
    )
    return result.stdout.split()


def test_the_query_terms_are_its_distinct_tokens_in_the_order_first_named() -> None:
    assert query_terms(["tea", "kyoto", "tea", "green", "kyoto"]) == ("tea", "kyoto", "green")
    assert query_terms([]) == ()


def test_scores_are_the_same_bits_under_every_hash_seed() -> None:
    seen = {seed: _scores_under(seed) for seed in ("0", "1", "2", "3", "4", "5")}
    first = seen["0"]
    assert len(first) > 41  # forty rows' scores, the query's term weight, passages kept
    assert any(float.fromhex(line.split("=")[1]) > 0 for line in first[:40])
    assert any(line.startswith("passage-") for line in first)
    for seed, scores in seen.items():
        assert scores == first, f"PYTHONHASHSEED={seed} scored differently"
