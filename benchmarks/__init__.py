"""Benchmarks for cairn: quality on the LoCoMo dev split (``python -m benchmarks.quality``).

Data is read from ``shared/data/`` beside the repository and never copied into it; results are
written to ``docs/benchmarks.md``.
"""
