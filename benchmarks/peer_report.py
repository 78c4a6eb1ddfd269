"""The peer section: mem0 and cairn side by side, and what mem0 could not do offline."""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmarks import report
from benchmarks.scoring import Outcome, by_category
from benchmarks.timing import timing_of

OFFLINE_NOTES = (
    "- mem0's BM25 keyword search is off: its Qdrant store encodes text with fastembed's "
    "`Qdrant/bm25` sparse model, which fastembed downloads from a model hub on first use "
    '(mem0 logs "fastembed not installed - BM25 keyword search disabled"; installing '
    "fastembed would only move the failure to the download). So mem0 ranks by cosine alone.",
    "- mem0's lemmatiser and entity boosts are off: both need spaCy's `en_core_web_sm`, which "
    'is not on PyPI (spaCy fetches it from GitHub releases); mem0 logs "spaCy is not '
    'installed" and skips them.',
    "- mem0's own embedders are all remote APIs or models fetched at run time (OpenAI, Ollama, "
    "Hugging Face, fastembed, ...), and its config accepts only those names, so the `Memory` "
    "is built with the OpenAI provider and a placeholder key, then its `embedding_model` is "
    "replaced by cairn's ONNX MiniLM behind mem0's `EmbeddingBase` interface. Its OpenAI "
    "clients (embedder and LLM) point at a closed loopback port and are never called: "
    "`infer=False` skips the LLM.",
    "- Telemetry is off (`MEM0_TELEMETRY=False`); mem0's home directory, history database and "
    "Qdrant files live in a temporary directory.",
)


@dataclass
class PeerRun:
    mem0_version: str
    mem0: list[Outcome] = field(default_factory=list)
    cairn: list[Outcome] = field(default_factory=list)
    cosine: list[Outcome] = field(default_factory=list)
    mem0_ms: list[float] = field(default_factory=list)
    cairn_ms: list[float] = field(default_factory=list)
    mem0_add_seconds: float = 0.0
    turns: int = 0
    seconds: float = 0.0
    data: str = ""
    command: str = ""
    date: str = ""


def _rate(count: int, seconds: float) -> str:
    return f"{count / seconds:.0f}" if seconds > 0 else "-"


def _cosine_line(run: PeerRun) -> str:
    mem0 = by_category(run.mem0)["overall"]
    cosine = by_category(run.cosine)["overall"]
    same = all(abs(a - b) < 0.0005 for a, b in zip(mem0.recall, cosine.recall, strict=True))
    recall = " / ".join(f"{x:.3f}" for x in cosine.recall)
    verdict = (
        "mem0's ranking matches it, as it must with its keyword and entity signals off"
        if same
        else "mem0's ranking differs from it"
    )
    return (
        "Plain cosine over the same vectors (the benchmark's baseline, no store) reaches "
        f"R@1/5/10/20 {recall}; {verdict}."
    )


def render_peer(run: PeerRun) -> str:
    header = [*report.summary_header("system"), "search median ms", "p95 ms"]
    rows = []
    for name, anchor, outcomes, latencies in (
        (f"mem0 {run.mem0_version} (cosine only, see below)", "peer-mem0", run.mem0, run.mem0_ms),
        ("cairn recall, defaults, ranked to 20", "peer-cairn", run.cairn, run.cairn_ms),
    ):
        timing = timing_of(latencies)
        summary = by_category(outcomes)["overall"]
        label = f'<a id="{anchor}"></a>{name}'
        rows.append([*report.summary_row(label, summary), *timing.cells()[1:]])
    parts = [
        "## Peer: mem0 OSS, side by side",
        "",
        f"- command: `{run.command}`",
        f"- date: {run.date}",
        *(f"- {line}" for line in report.machine_facts()),
        f"- data: {run.data}; each conversation one mem0 `user_id` and one cairn actor",
        f"- total wall time: {run.seconds:.0f} s; mem0 `add(infer=False)` of {run.turns} turns, "
        f"one per call: {run.mem0_add_seconds:.1f} s ({_rate(run.turns, run.mem0_add_seconds)} "
        "turns/s, vectors given)",
        "- both: the same turn text and MiniLM ONNX vectors; each question embedded live by the "
        "same ONNX model inside the timed call; mem0 `search(top_k=20)` with its defaults "
        "(threshold 0.1), cairn `recall(top_k=20)` with its defaults and a budget wide enough "
        "for 20 entries, journal off",
        "",
        report.table(header, rows),
        "",
        _cosine_line(run),
        "",
    ]
    for name, outcomes in (("mem0", run.mem0), ("cairn", run.cairn)):
        parts += [
            f"### {name}, per category",
            "",
            report.per_category_table(by_category(outcomes)),
            "",
        ]
    parts += ["### What mem0 could not do offline", "", *OFFLINE_NOTES, ""]
    return "\n".join(parts)
