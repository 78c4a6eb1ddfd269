"""What the consolidation tests share: a scope with staged evidence, scripted answers that
find their aliases by content, and executors that run passes when the test says so."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from datetime import timedelta
from pathlib import Path
from typing import Any

from cairn.changes import Create, NewRecord
from cairn.clock import FixedClock
from cairn.consolidate.commit import Consolidator
from cairn.consolidate.evidence import (
    EvidencePayload,
    EvidenceStager,
    RunIdentity,
    TranscriptMessage,
    build_evidence,
)
from cairn.llm.scripted import ScriptedModel
from cairn.local.fs_staging import FilesystemStagingStore
from cairn.model_request import ModelRequest
from cairn.models import RecordVersion, Role, Scope, Source, SourceKind
from cairn.ports import Stores
from cairn.rollout.index import Rollout, new_evidence_id
from cairn.rollout.payload import RolloutNotice
from cairn.store.memory import InMemoryBackend

SCOPE = Scope(memory_id="default", actor_id="tg:7")
USER = Source(kind=SourceKind.USER, session_id="s1")


class RecordingNotifier:
    """A notifier that keeps what it was asked to announce."""

    def __init__(self) -> None:
        self.announced: list[tuple[Scope, str]] = []

    def announce(self, notice: RolloutNotice) -> None:
        self.announced.append((notice.scope, notice.rollout_id))


# A record the model inferred earlier: a pass's evidence may retire or edit it.
INFERRED = Source(kind=SourceKind.MODEL, rollout_id="ro-earlier")


class Bench:
    """An in-memory store, staged payloads on disk, a clock and a scripted model."""

    def __init__(
        self, tmp_path: Path, *, stores: Stores | None = None, clock: FixedClock | None = None
    ) -> None:
        self.clock = clock or FixedClock()
        self.stores: Stores = stores or InMemoryBackend(self.clock).stores()
        self.staging = FilesystemStagingStore(tmp_path / "staging")
        self.notifier = RecordingNotifier()
        assert self.stores.rollouts is not None
        self.stager = EvidenceStager(self.stores.rollouts, self.staging, self.notifier, self.clock)
        self.model = ScriptedModel()
        self.waits: list[float] = []

    def consolidator(self, **overrides: Any) -> Consolidator:
        fields: dict[str, Any] = {
            "stores": self.stores,
            "staging": self.staging,
            "model": self.model,
            "clock": self.clock,
            "wait": self.waits.append,
        }
        return Consolidator(**{**fields, **overrides})

    def remember(
        self,
        content: str,
        *,
        category: str = "fact",
        scope: Scope = SCOPE,
        sources: tuple[Source, ...] = (USER,),
    ) -> RecordVersion:
        record = NewRecord(
            namespace=f"/facts/{scope.actor_id}/",
            content=content,
            category=category,
            sources=sources,
        )
        (created,) = self.stores.records.apply(scope, [Create(record=record)])
        self.clock.advance(timedelta(seconds=1))
        return created

    def run(self, *said: str, answer: str = "Noted.", scope: Scope = SCOPE) -> Rollout:
        """A completed run in which the user said ``said``; its evidence staged."""
        now = self.clock.now()
        transcript = [TranscriptMessage(role=Role.USER, text=text) for text in said]
        transcript.append(TranscriptMessage(role=Role.ASSISTANT, text=answer))
        payload = build_evidence(
            RunIdentity(
                scope=scope,
                session_id="s1",
                run_id=f"run-{len(self.notifier.announced)}",
                rollout_id=new_evidence_id(now),
                completed_at=now,
            ),
            transcript,
            answer,
        )
        self.clock.advance(timedelta(seconds=1))
        return self.stager.stage(payload)

    def pending(self, scope: Scope = SCOPE) -> list[str]:
        assert self.stores.rollouts is not None
        return [r.rollout_id for r in self.stores.rollouts.list_pending(scope, kind="evidence")]

    def live(self, scope: Scope = SCOPE) -> list[str]:
        return sorted(v.content for v in self.stores.records.list_records(scope).items)


def shown(request: ModelRequest) -> dict[str, Any]:
    """The document a consolidation request showed the model."""
    document: dict[str, Any] = json.loads(request.messages[0].text)
    return document


def alias_of(request: ModelRequest, content: str) -> int:
    """The alias the request gave the record holding ``content``."""
    for record in shown(request)["records"]:
        if record["content"] == content:
            return int(record["alias"])
    raise AssertionError(f"{content!r} was not shown")


def answer(*changes: dict[str, Any]) -> str:
    return json.dumps({"changes": list(changes)})


def answering(
    build: Callable[[ModelRequest], Sequence[dict[str, Any]]],
) -> Callable[[ModelRequest], str]:
    """A scripted answer computed from the request (aliases found by content)."""
    return lambda request: answer(*build(request))


class SynchronousExecutor(Executor):
    """Runs each pass in the caller's thread, to the end, as it is submitted."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_running_or_notify_cancel()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            future.set_exception(exc)
        return future


class ManualExecutor(Executor):
    """Holds submitted passes until the test runs them (``run``), so it can see them running."""

    def __init__(self) -> None:
        self.held: list[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        self.held.append((future, fn, args))
        return future

    def run(self, index: int = 0) -> Any:
        future, fn, args = self.held.pop(index)
        future.set_running_or_notify_cancel()
        result = fn(*args)
        future.set_result(result)
        return result

    @property
    def scopes(self) -> list[Scope]:
        return [args[0] for _, _, args in self.held]


def evidence_of(bench: Bench, rollout: Rollout) -> EvidencePayload:
    from cairn.consolidate.evidence import decode_evidence

    return decode_evidence(bench.staging.get(rollout.scope, rollout.rollout_id))
