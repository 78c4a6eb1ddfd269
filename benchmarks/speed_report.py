"""The speed page's section: what was measured, as tables a reader can link to row by row."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import report, synthetic
from benchmarks.speed_dynamodb import Counted
from benchmarks.speed_first import FirstRecall
from benchmarks.speed_memory import PeakMemory
from benchmarks.speed_paths import AppendResult
from benchmarks.speed_recall import ELSEWHERE_BYTES, SESSION_FACTS, Breakdown, SizeResult
from benchmarks.timing import Timing

DOCS_DIR = report.DOCS_PATH.parent


@dataclass
class SpeedRun:
    """Everything one run of the speed benchmark measured."""

    quick: bool
    sizes: list[SizeResult] = field(default_factory=list)
    breakdowns: list[Breakdown] = field(default_factory=list)
    first: list[FirstRecall] = field(default_factory=list)
    fill_seconds: dict[int, float] = field(default_factory=dict)
    fill_records: dict[int, int] = field(default_factory=dict)
    appends: AppendResult | None = None
    rendering: Timing | None = None
    formation: Timing | str | None = None
    memory: PeakMemory | None = None  # the index mapped from its persisted snapshot
    memory_build: PeakMemory | None = None  # the index built, and its snapshot written
    memory_records: int = 0
    dynamodb: list[Counted] = field(default_factory=list)
    dynamodb_records: int = 0
    seconds: float = 0.0
    command: str = ""
    date: str = ""


def _anchor(name: str, label: str) -> str:
    return f'<a id="{name}"></a>{label}'


def _recall_table(run: SpeedRun) -> str:
    header = ["records", "recall runs", "query embedded: median ms", "p95 ms"]
    header += ["vector given: median ms", "p95 ms", "embedding alone: median ms"]
    header += ["one pass over M ms", "floor ms", "recall / floor", "entries shown"]
    header += ["write (records/s)"]
    rows: list[list[object]] = []
    for size in run.sizes:
        written = run.fill_records.get(size.records, 0)
        seconds = run.fill_seconds.get(size.records, 0.0)
        rows.append(
            [
                _anchor(f"speed-recall-{size.records}", f"{size.records:,}"),
                size.end_to_end.runs,
                *size.end_to_end.cells()[1:],
                *size.engine_only.cells()[1:],
                size.embedding.cells()[1],
                size.one_pass.cells()[1],
                f"{size.floor:.1f}",
                f"{size.ratio:.2f}x",
                f"{size.entries:.1f}",
                f"{written / seconds:,.0f}" if seconds else "-",
            ]
        )
    return report.table(header, rows)


_ELSEWHERE_MIB = ELSEWHERE_BYTES // 2**20


def _apart_table(run: SpeedRun) -> str:
    header = ["records", "embedding alone ms", "after a recall ms", "one pass alone ms"]
    header += ["embedding, then the pass ms", "engine alone (vector given) ms"]
    header += ["after an embedding ms", f"after reading {_ELSEWHERE_MIB} MiB elsewhere ms"]
    header += ["the two after each other ms"]
    header += ["query-embedded recall ms"]
    rows: list[list[object]] = []
    for size in run.sizes:
        together = size.embedding_after_recall.median + size.engine_after_embedding.median
        rows.append(
            [
                _anchor(f"speed-apart-{size.records}", f"{size.records:,}"),
                size.embedding.cells()[1],
                size.embedding_after_recall.cells()[1],
                size.one_pass.cells()[1],
                size.in_sequence.cells()[1],
                size.engine_only.cells()[1],
                size.engine_after_embedding.cells()[1],
                size.engine_after_elsewhere.cells()[1],
                f"{together:.1f}",
                size.end_to_end.cells()[1],
            ]
        )
    return report.table(header, rows)


def _first_table(run: SpeedRun) -> str:
    header = ["records", "embedder load ms", "first recall ms (maps the persisted index)"]
    header += ["first recall ms (builds the index and writes it)"]
    header += ["`cairn recall`, whole process ms", "its CPU ms (user + system)"]
    header += ["same, from source without bytecode ms"]
    rows = [
        [
            _anchor(f"speed-first-{f.records}", f"{f.records:,}"),
            f"{f.embedder_load_ms:.0f}",
            f"{f.first_recall_ms:.0f}",
            f"{f.first_build_ms:.0f}",
            f"{f.command_ms:.0f}",
            f"{f.command_cpu_ms:.0f}",
            f"{f.command_source_ms:.0f}",
        ]
        for f in run.first
    ]
    return report.table(header, rows)


def _breakdown_table(run: SpeedRun) -> str:
    header = [
        "records",
        "read heads (list_records)",
        "fetch vectors",
        "score (tokens, BM25, cosine)",
    ]
    header += ["order (floor, context, signals, rank)", "dedup + clamp + render", "total ms"]
    rows: list[list[object]] = []
    for b in run.breakdowns:
        parts = (b.list_heads, b.fetch_vectors, b.score, b.order, b.select_and_render)
        total = sum(parts)
        cells = [f"{p:.0f} ({p / total:.0%})" if total else "-" for p in parts]
        rows.append([_anchor(f"speed-split-{b.records}", f"{b.records:,}"), *cells, f"{total:.0f}"])
    return report.table(header, rows)


def _paths_table(run: SpeedRun) -> str:
    header = ["path (embedded SQLite store, 1k records)", "runs", "median ms", "p95 ms"]
    rows: list[list[object]] = []
    if run.appends is not None:
        rows.append([_anchor("speed-append", "append one event"), *run.appends.single.cells()])
        rows.append(
            [
                _anchor("speed-append-sustained", "sustained append"),
                run.appends.sustained_events,
                f"{run.appends.sustained_per_second:,.0f} events/s",
                "-",
            ]
        )
    if run.rendering is not None:
        label = "render a block (clamp + render, 8 entries)"
        rows.append([_anchor("speed-render", label), *run.rendering.cells()])
    if isinstance(run.formation, Timing):
        label = "form one candidate (read, embed, neighbours, judge, apply)"
        rows.append([_anchor("speed-formation", label), *run.formation.cells()])
    elif run.formation is not None:
        rows.append([_anchor("speed-formation", run.formation), "-", "-", "-"])
    return report.table(header, rows)


def _memory_line(run: SpeedRun) -> str:
    if run.memory is None:
        return ""
    m = run.memory
    line = (
        f'<a id="speed-memory"></a>Peak memory of one recall at {run.memory_records:,} records '
        f"(fresh process, query vector given, journal off; the recall maps the scope's "
        f"persisted index snapshot): {m.traced_peak_mb:.0f} MB of "
        f"Python-tracked allocations at the peak of the recall (`tracemalloc`, numpy arrays "
        f"included); the process's peak resident set went from {m.rss_before_mb:.0f} MB "
        f"(interpreter, libraries, SQLite open) to {m.rss_after_mb:.0f} MB."
    )
    if run.memory_build is not None:
        b = run.memory_build
        line += (
            f" With no snapshot (the first recall after a write builds the index from the "
            f"store, one row at a time, and writes the file): {b.traced_peak_mb:.0f} MB "
            f"tracked, peak resident set {b.rss_before_mb:.0f} MB to {b.rss_after_mb:.0f} MB."
        )
    return line


def _dynamodb_table(run: SpeedRun) -> str:
    header = ["operation (DynamoDB on moto)", "requests", "by API"]
    rows = [
        [
            _anchor(f"speed-ddb-{i}", c.operation),
            c.total,
            ", ".join(f"{name} {n}" for name, n in sorted(c.requests.items())),
        ]
        for i, c in enumerate(run.dynamodb)
    ]
    return report.table(header, rows)


def render_recall_only(run: SpeedRun) -> str:
    """The recall table alone (``--recall-only``), with the run's command and machine."""
    facts = [f"- command: `{run.command}`", f"- date: {run.date}"]
    facts += [f"- {line}" for line in report.machine_facts()]
    return "\n".join([*facts, "", _recall_table(run), "", _apart_table(run)])


def render_speed(run: SpeedRun, image: Path | None) -> str:
    parts = [
        "## Speed and scale",
        "",
        f"- command: `{run.command}`",
        f"- date: {run.date}",
        *(f"- {line}" for line in report.machine_facts()),
        f"- total wall time: {run.seconds:.0f} s",
        f"- records: procedural one-line facts (`benchmarks/synthetic.py`), one user-sourced "
        f"record each in one scope, sessions of {SESSION_FACTS} facts a minute apart; vectors "
        f"from the ONNX MiniLM embedder for the first {synthetic.REAL_VECTORS:,} facts, then "
        "those vectors plus seeded Gaussian noise (cosine ~0.75 to their source), renormalised: "
        "real geometry, synthetic beyond 1k",
        "- recall: `cairn.recall.recall` as shipped (default policy, top_k 8, 4 KB block, "
        "journal written, the SQLite store's own recall index and durability settings), "
        "questions cycled from a fixed list, one warm-up call first (it builds the scope's "
        'index); "vector given" answers the query from vectors embedded beforehand, so it '
        "times the engine and the store alone",
        "- floor: what no recall can go under here, measured in the same run: the query's "
        "embedding (median) plus one pass over the scope's unit float32 matrix, the faster by "
        "median of `M @ q` (numpy as installed: BLAS on two threads, slow when other work "
        "holds the cores) and the row-by-row pass recall makes (one thread; from 4,096 rows "
        "chunks shared by two threads, the same bits per row)",
        "",
        "### Recall latency by scope size",
        "",
        _recall_table(run),
        "",
    ]
    if image is not None:
        relative = image.relative_to(DOCS_DIR).as_posix()
        parts += [f"![recall latency against record count]({relative})", ""]
    parts += [
        "### What the floor leaves out: each step after the other",
        "",
        "The floor times the embedding and the pass each on its own, back to back, so each "
        "runs with the caches it left itself. A recall runs them one after the other. Here the "
        "same steps are timed that way, in the same run (medians): the pass straight after "
        "embedding its question, in a loop; and a query-embedded recall split in two, the "
        "question embedded straight after the last recall, then recall answering it from the "
        "vector just made. Each step then starts with the caches the other left: the model's "
        "weights and the scope's matrix do not both stay in the last-level cache. The control: "
        f"the engine straight after reading {_ELSEWHERE_MIB} MiB of memory no recall touches. "
        "This is what "
        "the floor leaves out, shown beside it, not in its place: the target stays recall / "
        "floor.",
        "",
        _apart_table(run),
        "",
        "### First recall in a fresh process, and `cairn recall`",
        "",
        "Medians of 3 fresh processes each. The first recall is timed after the ONNX embedder "
        "is loaded and has embedded one text, two ways: mapping the scope's persisted index "
        "snapshot (a fresh process after a restart), and with the snapshot folder removed "
        "first, building the index from the store in one ordered pass and writing its snapshot "
        "(the first process after a write). `cairn recall` (which maps the snapshot) is timed "
        "from outside, interpreter "
        "start to exit (imports, model load, recall, journal), as an installed package runs "
        "it (bytecode compiled once beforehand, as pip does at install) and from source with "
        "no bytecode written (as a checkout runs with `PYTHONDONTWRITEBYTECODE`: cairn's own "
        "modules compiled afresh on every run).",
        "",
        _first_table(run),
        "",
        "### Where the scan's time goes (the reference the index is held to; one recall per "
        "size, query vector given)",
        "",
        "The full scan (`cairn.recall.scan`, which the index must match exactly) step by step, "
        "each step timed on its own, in order: the two port reads, the scoring `gather` does on "
        "what they return, then the pure steps. Shipped recall no longer runs these.",
        "",
        _breakdown_table(run),
        "",
        _memory_line(run),
        "",
        "### Other paths",
        "",
        _paths_table(run),
        "",
    ]
    parts += [
        f"### Requests per operation, DynamoDB on moto ({run.dynamodb_records:,} records)",
        "",
        "moto serves DynamoDB in process, so only request counts carry over, not times.",
        "",
        _dynamodb_table(run),
        "",
    ]
    return "\n".join(parts)
