"""Running the functions' handlers in-process the way Lambda would, and timing them.

Lambdas cannot run in moto, so a handler is called here with the event Lambda would deliver
(an SQS batch, an HTTP API payload-2.0 proxy event, a schedule). Each invocation's wall time is
measured on this machine, minus the time spent inside the offline model and embedder stand-ins
(a hosted model's latency is an input of the cost model instead), and what the function writes
to standard output (its Powertools logs and metrics: what CloudWatch Logs would ingest) is
counted in bytes. The time inside AWS requests is taken out as well (moto's emulation here: a
table copy per transaction item makes it no stand-in for DynamoDB's latency), and so is the
cost meter's own reading of items; the cost model adds a stated latency per request instead.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from benchmarks.cost_meter import Meter
from benchmarks.cost_scenario import MeasuredModel, StandInEmbedder
from tests.pipeline.aws import LambdaContext
from tests.unit.api_harness import HEADERS

Handler = Callable[[dict[str, Any], Any], Any]


@dataclass(frozen=True)
class Invocation:
    function: str
    seconds: float
    log_bytes: int
    requests: int  # AWS requests the handler made (their time is not in ``seconds``)
    metrics: frozenset[str]  # custom metrics published (Powertools' embedded metric format)


@dataclass
class Invocations:
    """Every handler invocation so far, in order."""

    done: list[Invocation] = field(default_factory=list)

    def since(self, start: int) -> list[Invocation]:
        return self.done[start:]


@dataclass
class Output:
    size: int = 0
    text: str = ""


@contextmanager
def _stdout() -> Iterator[Output]:
    """What reaches file descriptor 1 while the block runs (logs and metrics)."""
    sys.stdout.flush()
    saved = os.dup(1)
    output = Output()
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        try:
            yield output
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
            output.size = sink.seek(0, os.SEEK_END)
            sink.seek(0)
            output.text = sink.read().decode("utf-8", errors="replace")


def metric_names(text: str) -> frozenset[str]:
    """Custom metrics in embedded-metric-format lines: name and dimension set, as CloudWatch
    counts them (one metric per name and dimension values)."""
    found: set[str] = set()
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or "_aws" not in record:
            continue
        for directive in record["_aws"].get("CloudWatchMetrics", []):
            dimensions = ",".join(
                f"{d}={record.get(d)}" for group in directive.get("Dimensions", []) for d in group
            )
            for metric in directive.get("Metrics", []):
                found.add(f"{directive.get('Namespace')}/{metric['Name']}[{dimensions}]")
    return frozenset(found)


@dataclass
class FunctionRunner:
    """Invokes handlers as ``function``, recording each invocation's time and log bytes."""

    model: MeasuredModel
    embedder: StandInEmbedder
    invocations: Invocations
    meter: Meter

    def wrap(self, function: str, handler: Handler) -> Handler:
        def invoke(event: dict[str, Any], context: Any) -> Any:
            return self.invoke(function, handler, event, context)

        return invoke

    def invoke(self, function: str, handler: Handler, event: dict[str, Any], context: Any) -> Any:
        excluded, requests = self._excluded(), self.meter.request_count
        with _stdout() as logged:
            started = time.perf_counter()
            result = handler(event, context or LambdaContext(function_name=f"cairn-{function}"))
            spent = time.perf_counter() - started
        spent -= self._excluded() - excluded
        requests = self.meter.request_count - requests
        found = Invocation(function, spent, logged.size, requests, metric_names(logged.text))
        self.invocations.done.append(found)
        return result

    def _excluded(self) -> float:
        stand_ins = self.model.use.seconds + self.embedder.use.seconds
        return stand_ins + self.meter.hook_seconds + self.meter.request_seconds


def http_api_event(method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
    """An HTTP API (payload format 2.0) proxy event, as API Gateway hands it to the function."""
    return {
        "version": "2.0",
        "routeKey": "ANY /{proxy+}",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {name.lower(): value for name, value in HEADERS.items()},
        "requestContext": {"http": {"method": method, "path": path}, "stage": "$default"},
        "body": json.dumps(body) if body is not None else None,
        "isBase64Encoded": False,
    }


def answered(response: dict[str, Any], what: str) -> dict[str, Any]:
    """The JSON answer of a proxy response; ``RuntimeError`` naming the error type if it
    failed (the cost of a failed call is not the cost of the operation)."""
    status = int(response["statusCode"])
    if status >= 300:
        kind = response.get("headers", {}).get("x-amzn-ErrorType", "?")
        raise RuntimeError(f"{what} answered {status} ({kind}); the cost run cannot go on")
    found: dict[str, Any] = json.loads(response["body"])
    return found
