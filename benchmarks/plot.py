"""The recall-latency plot: median and p95 against record count, written as a PNG."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from benchmarks.speed_recall import SizeResult

IMG_DIR = Path(__file__).resolve().parents[1] / "docs" / "img"
LATENCY_PNG = IMG_DIR / "recall-latency.png"


def plot_latency(results: Sequence[SizeResult], path: Path = LATENCY_PNG) -> Path | None:
    """Write the plot to ``path``; ``None`` (and nothing written) if matplotlib is absent."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display: render straight to a file
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    sizes = [r.records for r in results]
    figure, axes = plt.subplots(figsize=(7, 4.2), dpi=110)
    lines = (
        ("recall, query embedded", "end_to_end", "tab:blue"),
        ("recall, query vector given", "engine_only", "tab:orange"),
    )
    for label, field, colour in lines:
        medians = [getattr(r, field).median for r in results]
        p95s = [getattr(r, field).p95 for r in results]
        axes.plot(sizes, medians, marker="o", color=colour, label=f"{label}: median")
        axes.plot(sizes, p95s, marker="^", linestyle="--", color=colour, label=f"{label}: p95")
    embedding = [r.embedding.median for r in results]
    axes.plot(sizes, embedding, marker="s", color="tab:green", label="query embedding alone")
    floor = [r.floor for r in results]
    axes.plot(sizes, floor, marker="x", color="black", label="floor: embedding + one pass over M")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("live records in the scope")
    axes.set_ylabel("milliseconds")
    axes.set_title("cairn recall latency, embedded SQLite store, 2 cores")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    # Fixed metadata keeps the file byte-identical when the numbers are.
    figure.savefig(path, metadata={"Software": None})
    plt.close(figure)
    return path
