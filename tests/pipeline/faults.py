"""Fakes that fail on purpose, and the accounting every fault test ends with."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from cairn.errors import ModelTimeoutError
from cairn.model_request import ModelRequest, ModelResponse, ModelUsage, StopReason
from cairn.models import Scope
from cairn.ports import ModelProvider, Notifier, RolloutStore, StagingStore, Stores
from cairn.rollout.index import RolloutState
from cairn.rollout.payload import RolloutNotice
from tests.pipeline.scenario import live_records


class Crash(Exception):  # noqa: N818 - it stands for the process dying, not an error to handle
    """The process dies here: nothing after this line of the pipeline runs."""


class CrashBeforePublish:
    """A notifier whose process dies before the publish reaches the topic."""

    def announce(self, notice: RolloutNotice) -> None:
        raise Crash("before publish")


class CrashAfterPublish:
    """A notifier whose process dies right after the topic took the publish."""

    def __init__(self, inner: Notifier) -> None:
        self.inner = inner

    def announce(self, notice: RolloutNotice) -> None:
        self.inner.announce(notice)
        raise Crash("after publish")


class CrashAfterPut:
    """A staging store whose process dies right after the payload was written."""

    def __init__(self, inner: StagingStore) -> None:
        self.inner = inner

    def put(self, scope: Scope, rollout_id: str, payload: bytes) -> str:
        self.inner.put(scope, rollout_id, payload)
        raise Crash("after put")

    def get(self, scope: Scope, rollout_id: str) -> bytes:
        return self.inner.get(scope, rollout_id)

    def delete(self, scope: Scope, rollout_id: str) -> None:
        self.inner.delete(scope, rollout_id)

    def erase_scope(self, scope: Scope) -> int:
        return self.inner.erase_scope(scope)


class CrashBeforeMarkingConsumed:
    """A rollout index whose process dies after the records were written, before the rollout
    is marked consumed; every other call goes through."""

    def __init__(self, inner: RolloutStore) -> None:
        self.inner = inner

    def mark(self, scope: Scope, rollout_id: str, state: RolloutState, **kwargs: Any) -> Any:
        if state is RolloutState.CONSUMED:
            raise Crash("before marking consumed")
        return self.inner.mark(scope, rollout_id, state, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class TimesOut:
    """A model that times out on its first ``failures`` calls, then answers as ``inner``."""

    def __init__(self, inner: ModelProvider, failures: int) -> None:
        self.inner = inner
        self.failures = failures

    def complete(self, request: ModelRequest) -> ModelResponse:
        if self.failures > 0:
            self.failures -= 1
            raise ModelTimeoutError("the model did not answer within 45 s; retry")
        return self.inner.complete(request)


class AnswersGarbage:
    """A model whose every answer is prose where JSON was asked for."""

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        return ModelResponse(
            text="Sure! Here are the facts I found: the user likes coffee.",
            usage=ModelUsage(calls=1, input_tokens=10, output_tokens=10),
            model_id="garbage",
            latency_ms=0,
            stop_reason=StopReason.END,
        )


def assert_accounted_for(
    stores: Stores, scope: Scope, acknowledged: Iterable[str], rollout_ids: Iterable[str]
) -> None:
    """Every acknowledged event is in exactly one of the rollouts, each consumed or failed with
    its reason; and no fact was filed twice."""
    rollouts = stores.rollouts
    assert rollouts is not None
    found = [rollouts.get(scope, rid) for rid in set(rollout_ids)]
    for rollout in found:
        assert rollout.state in (RolloutState.CONSUMED, RolloutState.FAILED), rollout
        if rollout.state is RolloutState.FAILED:
            assert rollout.failure
    in_rollouts = Counter(ref.event_id for r in found for ref in r.events)
    assert set(in_rollouts) == set(acknowledged)
    assert max(in_rollouts.values()) == 1
    digests = [r.content_digest for r in live_records(stores, scope)]
    assert len(digests) == len(set(digests)), "a fact was filed twice"
    assert all(r.seen_count == 1 for r in live_records(stores, scope))
