"""Every benchmark, in order: ``python -m benchmarks [--quick]`` (what ``make bench`` runs).

1. quality: recall on the LoCoMo dev split, the ideas, the budget curve, the policy sweep
   fact_recall: recall on the fact set (short records asked about in other words)
   crossval: the defaults' grid cross-validated on both (leave one conversation / user out)
2. speed: recall at 1k/10k/100k records, memory, append, render, formation, DynamoDB requests
   speed_deployed: recall over DynamoDB + S3 on moto (requests before and after the recall index
   objects), RetrieveMemoryRecords through `cairn serve` beside the library recall
3. peer_mem0: mem0 OSS beside cairn on the same turns and questions
4. history: rolling LoCoMo conversations up, and their boot windows' size and read time
   history_recall: recall over turns and chunks on LoCoMo dev, with and without named periods
5. cost: the cost model (docs/cost.md), once ``benchmarks.cost`` exists (issue 8, part 4)

A full run rewrites its sections of docs/benchmarks.md and docs/img/; ``--quick`` runs each on
a small slice, prints, and writes nothing. A step that fails is reported and the others still
run; the exit status is non-zero if any failed.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
import traceback
from collections.abc import Callable, Sequence

STEPS = (
    "quality",
    "fact_recall",
    "crossval",
    "speed",
    "speed_deployed",
    "peer_mem0",
    "history",
    "history_recall",
    "cost",
)
# The steps whose long parts draw progress bars on stderr, which --quiet turns off.
WITH_BARS = frozenset({"quality"})


def _step(name: str) -> Callable[[list[str]], int] | None:
    """The ``main`` of ``benchmarks.<name>``, or ``None`` if that module does not exist yet."""
    try:
        module = importlib.import_module(f"benchmarks.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"benchmarks.{name}":
            return None
        raise
    main: Callable[[list[str]], int] = module.main
    return main


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a small slice of each; no writes")
    parser.add_argument("--only", choices=STEPS, action="append", help="run just these steps")
    parser.add_argument("--quiet", action="store_true", help="no progress bars on stderr")
    args = parser.parse_args(argv)
    forwarded = ["--quick"] if args.quick else []
    failed: list[str] = []
    started = time.perf_counter()
    for name in args.only or STEPS:
        began = time.perf_counter()
        print(f"== benchmarks.{name}", file=sys.stderr)
        try:
            step = _step(name)
            if step is None:
                # The hook for part 4: the cost model needs the extraction pipeline's numbers.
                print(f"benchmarks.{name}: not written yet; skipped", file=sys.stderr)
                continue
            quiet = ["--quiet"] if args.quiet and name in WITH_BARS else []
            status = step([*forwarded, *quiet])
        except Exception:  # one broken step must not hide the others' results
            traceback.print_exc()
            status = 1
        if status != 0:
            failed.append(name)
        print(f"== benchmarks.{name}: {time.perf_counter() - began:.0f} s", file=sys.stderr)
    print(f"== all benchmarks: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
