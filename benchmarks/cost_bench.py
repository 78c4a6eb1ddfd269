"""The bench the cost runs stand on: the deployment in moto with the functions' wiring pointed
at it, the meter on every client, and ``measure``, which turns one action into an ``Operation``.

The deployment is ``tests.pipeline.aws``'s (the stack's tables, bucket, FIFO topic and queue);
the functions' handlers run in-process (``cost_lambda``); the memory is created through the API
function with AgentCore's three built-in strategies.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import os
import statistics
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from benchmarks.cost_lambda import FunctionRunner, Invocations, answered, http_api_event
from benchmarks.cost_meter import Meter, Tally
from benchmarks.cost_scenario import (
    MeasuredModel,
    ModelUse,
    StandInEmbedder,
    event,
    memory_body,
    segment,
)
from cairn.clock import FixedClock
from cairn.extract.triggers import policy_for
from cairn.models import Scope

CONSOLIDATION_HANDLER = "functions.consolidation.handler"


@dataclass
class Operation:
    """One measured operation: what it sent, where it ran and for how long."""

    key: str
    title: str
    tally: Tally
    function: str | None = None  # the Lambda it runs in; None: the caller's own process
    invocations: int = 0
    seconds: float = 0.0  # per invocation, median over repeats; requests, stand-ins excluded
    function_requests: int = 0  # AWS requests made inside the function
    log_bytes: int = 0  # per invocation
    model: ModelUse = field(default_factory=ModelUse)
    embeds: ModelUse = field(default_factory=ModelUse)
    api_requests: int = 0
    metrics: frozenset[str] = frozenset()  # custom metrics its function published


class SeedingClient:
    """A DynamoDB client that runs each item of a TransactWriteItems as its own request.

    For seeding only, on the meter's uncounted client: moto copies every table for each item
    of a transaction, so seeding 1,000 records through real transactions takes minutes. The
    seed has no concurrent writer, so losing atomicity changes nothing it writes.
    """

    def __init__(self, client: Any) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def transact_write_items(self, **request: Any) -> dict[str, Any]:
        run = {
            "Put": self._client.put_item,
            "Update": self._client.update_item,
            "Delete": self._client.delete_item,
        }
        for entry in request["TransactItems"]:
            ((kind, body),) = entry.items()
            if kind in run:
                allowed = {
                    k: v for k, v in body.items() if k != "ReturnValuesOnConditionCheckFailure"
                }
                run[kind](**allowed)
        return {}


def _delta(after: ModelUse, before: ModelUse) -> ModelUse:
    return ModelUse(
        calls=after.calls - before.calls,
        prompt_bytes=after.prompt_bytes - before.prompt_bytes,
        answer_bytes=after.answer_bytes - before.answer_bytes,
        seconds=after.seconds - before.seconds,
    )


class Bench:
    """The deployment in moto, the functions' wiring pointed at it, and the meter on it."""

    def __init__(self, session: Any, peek: Any, repeats: int) -> None:
        from functions._common import wiring
        from tests.pipeline.aws import LambdaRuntime, create_deployment

        self.meter = Meter(session, peek)
        self.peek, self.repeats = peek, repeats
        with self.meter.unmetered():
            self.deployment = create_deployment(session)
        os.environ.update(self.deployment.environment())
        self.model, self.embedder, self.clock = MeasuredModel(), StandInEmbedder(), FixedClock()
        wiring.configure(
            session=session, model=self.model, embedder=self.embedder, clock=self.clock
        )
        self.wiring = wiring
        self.invocations = Invocations()
        self.runner = FunctionRunner(self.model, self.embedder, self.invocations, self.meter)
        self.api_handler = importlib.import_module("functions.api.handler")
        self.api_handler.api.cache_clear()
        extraction = importlib.import_module("functions.extraction.handler")
        self.sweep_handler = importlib.import_module("functions.sweep.handler").lambda_handler
        self.extraction = LambdaRuntime(
            session.client("sqs"),
            self.deployment,
            self.runner.wrap("extraction", extraction.lambda_handler),
        )
        self.stores, self.pipeline = wiring.stores(), wiring.pipeline()
        self.delivered: list[dict[str, Any]] = []
        self.use_memory("costModel")

    def use_memory(self, name: str) -> None:
        """Create a memory with AgentCore's three built-in strategies and measure in it."""
        created = self.api("POST", "/memories/create", memory_body(name), "CreateMemory")
        self.memory_id = str(created["memory"]["id"])
        assert self.stores.memories is not None
        self.policy = policy_for(self.stores.memories.get(self.memory_id))

    # --- measuring -----------------------------------------------------------------------

    def measure(self, key: str, title: str, action: Callable[[], object]) -> Operation:
        """Run ``action`` ``repeats`` times: the requests and units of the first run (later
        runs skip reading items back, for speed), the median time of all."""
        seconds: list[float] = []
        for repeat in range(self.repeats):
            before_model, before_embeds = copy.copy(self.model.use), copy.copy(self.embedder.use)
            start = len(self.invocations.done)
            with self.meter.measuring() as tally, self._units(repeat == 0):
                action()
            ran = self.invocations.since(start)
            seconds.append(sum(i.seconds for i in ran))
            if repeat == 0:
                first = tally
                model = _delta(self.model.use, before_model)
                embeds = _delta(self.embedder.use, before_embeds)
        return Operation(
            key=key,
            title=title,
            tally=first,
            function=ran[0].function if ran else None,
            invocations=len(ran),
            seconds=statistics.median(seconds) / max(1, len(ran)),
            log_bytes=sum(i.log_bytes for i in ran) // max(1, len(ran)),
            function_requests=sum(i.requests for i in ran),
            model=model,
            embeds=embeds,
            api_requests=sum(1 for i in ran if i.function == "api"),
            metrics=frozenset().union(*(i.metrics for i in ran)),
        )

    @contextmanager
    def _units(self, counted: bool) -> Iterator[None]:
        if counted:
            yield
            return
        with self.meter.unmetered():
            yield

    def api(self, method: str, path: str, body: dict[str, Any], what: str) -> dict[str, Any]:
        handler = self.api_handler.lambda_handler
        response = self.runner.invoke("api", handler, http_api_event(method, path, body), None)
        return answered(response, what)

    # --- the pipeline ---------------------------------------------------------------------

    def turns(self, n: int, session_id: str) -> list[Any]:
        return [event(role, text, session_id, self.clock) for role, text in segment(n)]

    def rollout(self, scope: Scope, n: int, session_id: str) -> None:
        """Six turns through the pipeline, then the extraction function consumes the rollout."""
        for turn in self.turns(n, session_id):
            self.pipeline.append(scope, turn, self.policy)
        self.consume()

    def consume(self) -> None:
        messages = self.extraction.receive()
        if not messages or self.extraction.deliver(messages):
            raise RuntimeError("the extraction function did not consume the rollout")
        self.delivered = messages

    def consolidate(self) -> None:
        """The consolidation function handed the notices extraction was last handed: the topic
        delivers every notice to both queues (moto's deployment subscribes only extraction's,
        so the event is built from the same messages)."""
        from tests.pipeline.aws import sqs_record

        handler = importlib.import_module(CONSOLIDATION_HANDLER).lambda_handler
        records = [sqs_record(m, self.deployment.queue_arn) for m in self.delivered]
        answer = self.runner.invoke("consolidation", handler, {"Records": records}, None)
        if answer.get("batchItemFailures"):
            raise RuntimeError("the consolidation function failed the notice")

    @staticmethod
    def consolidates() -> bool:
        """Whether this build of cairn has the consolidation function."""
        return importlib.util.find_spec(CONSOLIDATION_HANDLER) is not None

    def drain(self) -> None:
        """Consume whatever waits on the queue."""
        while messages := self.extraction.receive():
            if self.extraction.deliver(messages):
                raise RuntimeError("the extraction function failed a rollout")

    @property
    def api_counts_turns(self) -> bool:
        """Whether the API function appends through the extraction pipeline."""
        return getattr(self.api_handler.api().context, "extraction", None) is not None

    @contextmanager
    def scratch(self) -> Iterator[None]:
        """Requests counted into nothing: warm-ups and set-up."""
        with self.meter.measuring():
            yield
