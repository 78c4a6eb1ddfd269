"""The extraction pipeline's own cost per rollout: AWS requests, and time with the model excluded.

    python -m benchmarks.extraction_overhead [--rollouts 20]

Drives the scenario of ``tests/pipeline`` (six turns, which the built-in message trigger turns
into one rollout) ``--rollouts`` times, on two paths:

- AWS, on moto: appends through ``functions._common.wiring.pipeline()`` (count, stage,
  announce), then the extraction handler in-process on what arrived on the queue. Every request
  is counted by a botocore ``before-call`` hook on the session, and the time spent inside
  requests (``before-call`` to ``after-call``: moto's emulation here, the network in AWS) is
  subtracted, leaving cairn's own time: planning, (de)serialising, validating, Powertools.
- Embedded: the SQLite store in a temporary directory, payloads on disk, the worker driven by
  ``run_once``.

Model time is measured around every model call (``TimedModel``) and subtracted; the model is
the offline heuristic one and the embedder the hashing one, so what remains is the pipeline:
counting, staging, notifying, reading back, forming and writing records.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any

from cairn.clock import FixedClock
from cairn.embed.hashing import HashingEmbedder
from cairn.extract.triggers import embedded_memory, policy_for
from cairn.local import offline_model
from cairn.local.fs_staging import FilesystemStagingStore
from cairn.local.system import wire_embedded
from cairn.models import Scope
from cairn.store.sqlite import SQLiteBackend
from tests.pipeline.scenario import TURNS, TimedModel, turn

POLICY = policy_for(embedded_memory("support-AbCdEf1234"))
# Requests the event source mapping makes on the function's behalf (receive, delete).
ESM_OPERATIONS = frozenset({"sqs.ReceiveMessage", "sqs.DeleteMessage"})


class RequestCounter:
    """Counts every request a boto3 session's clients send, by ``service.Operation``, and the
    wall time spent inside them (moto's emulation here; the network in AWS)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.seconds = 0.0
        self._started = 0.0

    def before(self, model: Any, **_: Any) -> None:
        self.counts[f"{model.service_model.service_name}.{model.name}"] += 1
        self._started = time.perf_counter()

    def after(self, **_: Any) -> None:
        self.seconds += time.perf_counter() - self._started

    def register(self, session: Any) -> None:
        session.events.register("before-call", self.before)
        session.events.register("after-call", self.after)
        session.events.register("after-call-error", self.after)

    def take(self) -> Counter[str]:
        taken, self.counts = self.counts, Counter()
        return taken


def _scope(n: int) -> Scope:
    return Scope(memory_id="support-AbCdEf1234", actor_id=f"tg:{n}")


def _timed(action: Callable[[], Any]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def run_aws(rollouts: int) -> dict[str, Any]:
    import boto3
    from moto import mock_aws

    from functions._common import wiring
    from tests.pipeline.aws import REGION, LambdaRuntime, create_deployment

    model, clock, counter = TimedModel(offline_model()), FixedClock(), RequestCounter()
    with mock_aws():
        session = boto3.session.Session(
            aws_access_key_id="testing",
            aws_secret_access_key="testing",  # noqa: S106 - moto's fake credentials
            region_name=REGION,
        )
        # Registered first: a client copies the session's event hooks when it is created.
        counter.register(session)
        deployment = create_deployment(session)
        os.environ.update(deployment.environment())
        wiring.configure(session=session, model=model, embedder=HashingEmbedder(), clock=clock)
        handler = importlib.import_module("functions.extraction.handler")
        runtime = LambdaRuntime(session.client("sqs"), deployment, handler.lambda_handler)
        pipeline = wiring.pipeline()
        wiring.consumer()
        counter.take()  # the setup's requests are not the pipeline's
        produce, consume, requests = [], [], []
        for n in range(rollouts):
            scope = _scope(n)
            turns = [turn(role, text, clock) for role, text in TURNS]
            in_aws = counter.seconds
            spent = _timed(partial(_append_all, pipeline.append, scope, turns, POLICY))
            produce.append(spent - (counter.seconds - in_aws))
            produced = counter.take()
            messages = runtime.receive()
            in_model, in_aws = model.seconds, counter.seconds
            spent = _timed(partial(runtime.deliver, messages))
            consume.append(spent - (model.seconds - in_model) - (counter.seconds - in_aws))
            requests.append((produced, counter.take()))
            clock.advance(timedelta(minutes=1))
        wiring.configure()
    return {"produce": produce, "consume": consume, "requests": requests}


def run_embedded(rollouts: int) -> dict[str, Any]:
    model, clock = TimedModel(offline_model()), FixedClock()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cairn.db"
        wired = wire_embedded(
            SQLiteBackend(path, clock).stores(),
            FilesystemStagingStore(Path(folder) / "staging"),
            model=model,
            embedder=HashingEmbedder(),
            clock=clock,
        )
        wired.worker.run_once()
        produce, consume = [], []
        for n in range(rollouts):
            scope = _scope(n)
            turns = [turn(role, text, clock) for role, text in TURNS]
            produce.append(_timed(partial(_append_all, wired.append, scope, turns)))
            before = model.seconds
            consume.append(_timed(wired.worker.run_once) - (model.seconds - before))
            clock.advance(timedelta(seconds=1))
        wired.close()
    return {"produce": produce, "consume": consume}


def _append_all(append: Callable[..., Any], scope: Scope, turns: list[Any], *more: Any) -> None:
    for event in turns:
        append(scope, event, *more)


def _ms(values: list[float]) -> str:
    p90 = sorted(values)[max(0, int(len(values) * 0.9) - 1)]
    return f"{statistics.median(values) * 1000:.1f} ms (p90 {p90 * 1000:.1f})"


def _requests_table(requests: list[tuple[Counter[str], Counter[str]]]) -> list[str]:
    """Requests of one steady-state rollout (the last), by side and operation."""
    produced, consumed = requests[-1]
    lines = ["| side | operation | requests |", "|---|---|---|"]
    for side, counts in (("produce (6 appends + release)", produced), ("consume", consumed)):
        for operation, count in sorted(counts.items()):
            lines.append(f"| {side} | {operation} | {count} |")
    ours = sum(produced.values()) + sum(c for o, c in consumed.items() if o not in ESM_OPERATIONS)
    lines.append(f"| **total made by cairn** | | **{ours}** |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=20)
    args = parser.parse_args()
    aws, embedded = run_aws(args.rollouts), run_embedded(args.rollouts)
    print(f"rollouts: {args.rollouts} (6 turns each), model time excluded, median (p90)")
    print(f"AWS (cairn's own time: requests excluded too)   produce: {_ms(aws['produce'])}")
    print(f"                                                consume: {_ms(aws['consume'])}")
    print(f"embedded (SQLite, fsync per commit)             produce: {_ms(embedded['produce'])}")
    print(f"                                                consume: {_ms(embedded['consume'])}")
    print("\n".join(_requests_table(aws["requests"])))


if __name__ == "__main__":
    main()
