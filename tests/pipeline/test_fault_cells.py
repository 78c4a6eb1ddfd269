"""The fault matrix's write-path cells, injected generically at the call each step makes.

On moto a botocore hook on the functions' own clients (``before-call`` / ``after-call`` of the
operation the step uses) kills the process (a ``BaseException`` nothing in cairn catches)
before the request is sent or after moto committed it, raises a server error, a throttling
error or a read timeout before sending, or loses the answer after the commit. On SQLite the
step's write transaction is wrapped: killed before ``BEGIN`` or after ``COMMIT``, an I/O error
or ``SQLITE_BUSY`` raised after the body ran (so everything it wrote rolls back), or a real
second connection holding the write lock past the busy timeout. A killed embedded process is
replaced by a new one on the same file (its in-memory queue is lost with it).

Then the normal recovery runs -- the caller resends the same request (same idempotency key)
until it is acknowledged, the queue redelivers, the sweep releases and re-announces -- and the
invariant is checked: every acknowledged event in exactly one rollout, every rollout consumed,
no fact filed twice, everything the conversation should leave remembered.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError, ReadTimeoutError

from cairn.clock import FixedClock
from cairn.embed.hashing import HashingEmbedder
from cairn.erasure import erase_actor
from cairn.errors import (
    CairnError,
    JournalNotFoundError,
    ModelTimeoutError,
    ModelUnavailableError,
)
from cairn.extract.staging import RolloutPipeline
from cairn.extract.triggers import embedded_memory, policy_for
from cairn.local.fs_staging import FilesystemStagingStore
from cairn.local.system import EmbeddedExtraction, wire_embedded
from cairn.models import EventInput, Role, Scope
from cairn.ports import Stores
from cairn.recall import RecallQuery, recall, replay
from cairn.rollout.index import REDELIVER_AFTER, Rollout, RolloutState
from cairn.rollout.payload import RolloutNotice
from cairn.rollout.staging_keys import scope_prefix
from cairn.store.sqlite import SQLiteBackend
from cairn.store.sqlite.connection import SQLiteDatabase
from tests.pipeline.aws import LambdaContext, LambdaRuntime
from tests.pipeline.conftest import SwitchableModel
from tests.pipeline.consolidation_scenario import (
    MEMORY,
    RUN_1,
    RUN_2,
    ScenarioModel,
    assert_resolved,
    hold_run,
)
from tests.pipeline.faults import assert_accounted_for
from tests.pipeline.scenario import SCOPE, TURNS, assert_remembered, live_records, turn

POLICY = policy_for(embedded_memory(SCOPE.memory_id))
CONSOLIDATION_WINDOW = timedelta(milliseconds=200)  # a completed run waits this before its pass


class Killed(BaseException):
    """The process is killed at this point: no ``except Exception`` in cairn stops it."""


# --- where each step's call is, as (operation, how many of them come first) -------------------

# DynamoDB/S3/SNS: the n-th call of an operation within the step's window (the probe of the
# calls each step makes: a plain append is GetItem + TransactWriteItems; the claiming append
# then stages (PutObject, TransactWriteItems) and announces (Publish, TransactWriteItems); a
# delivery writes the records with BatchGetItem + TransactWriteItems, first of all).
AWS_TARGETS: dict[str, tuple[str, str, int]] = {
    "event-append": ("dynamodb", "TransactWriteItems", 0),
    "trigger": ("dynamodb", "TransactWriteItems", 0),
    "staging": ("s3", "PutObject", 0),
    "publish": ("sns", "Publish", 0),
    "formation": ("dynamodb", "TransactWriteItems", 0),
}
# SQLite: the n-th write transaction of the step's window (the claiming append: the append with
# its count and claim, then marking it staged, then marking it announced; a consumption: the
# record apply first).
SQLITE_TARGETS: dict[str, int] = {
    "event-append": 0,
    "trigger": 0,
    "staging": 1,
    "publish": 2,
    "formation": 0,
}
WINDOW = {  # which part of the conversation each step happens in
    "event-append": "plain-append",
    "trigger": "claiming-append",
    "staging": "claiming-append",
    "publish": "claiming-append",
    "formation": "delivery",
}


def client_error(code: str, status: int, operation: str) -> ClientError:
    return ClientError(
        {
            "Error": {"Code": code, "Message": "injected"},
            "ResponseMetadata": {"HTTPStatusCode": status},
        },
        operation,
    )


THROTTLING = {
    "dynamodb": ("ProvisionedThroughputExceededException", 400),
    "s3": ("SlowDown", 503),
    "sns": ("Throttling", 400),
}
SERVER_ERROR = {
    "dynamodb": ("InternalServerError", 500),
    "s3": ("InternalError", 500),
    "sns": ("InternalError", 500),
}


@dataclass
class AwsFault:
    """One fault, fired once at the ``skip``-th call of ``operation`` (``A|B``: of either)
    once armed."""

    service: str
    operation: str
    fault: str
    skip: int = 0
    armed: bool = False
    seen: int = 0
    fired: int = 0

    def install(self, client: Any) -> None:
        for operation in self.operation.split("|"):  # calls of any of them count
            client.meta.events.register(f"before-call.{self.service}.{operation}", self._before)
            client.meta.events.register(f"after-call.{self.service}.{operation}", self._after)

    def _due(self, phase: str) -> bool:
        wanted = "after" if self.fault in ("killed-after", "answer-lost") else "before"
        if not self.armed or self.fired or phase != wanted:
            return False
        self.seen += 1
        if self.seen <= self.skip:
            return False
        self.fired += 1
        return True

    def _before(self, **_: Any) -> None:
        if not self._due("before"):
            return
        if self.fault == "killed-before":
            raise Killed(f"before {self.operation}")
        if self.fault == "raised":
            raise client_error(*SERVER_ERROR[self.service], self.operation)
        if self.fault == "throttled":
            raise client_error(*THROTTLING[self.service], self.operation)
        if self.fault == "timeout":
            raise ReadTimeoutError(endpoint_url=f"https://{self.service}")
        raise AssertionError(self.fault)

    def _after(self, **_: Any) -> None:
        if not self._due("after"):
            return
        if self.fault == "killed-after":
            raise Killed(f"after {self.operation}")
        raise ReadTimeoutError(endpoint_url=f"https://{self.service}")  # answer-lost


# --- the conversation and the caller's retries --------------------------------------------------


def acknowledged_by_retrying(call: Callable[[], Any], restart: Callable[[], None]) -> Any:
    """What the caller does: resend the same request until it is acknowledged; after a kill,
    the process serving it is a new one."""
    for _ in range(4):
        try:
            return call()
        except Killed:
            restart()
        except CairnError as exc:
            if not exc.retryable:
                raise
    raise AssertionError("never acknowledged")


@dataclass
class Conversation:
    """The scenario's turns, each with its own idempotency key, sent through ``pipeline()``."""

    clock: FixedClock
    pipeline: Callable[[], RolloutPipeline]
    restart: Callable[[], None]
    acknowledged: list[str] = field(default_factory=list)

    def send(self, index: int, event: EventInput) -> Any:
        key = f"{index + 1:064x}"
        appended = acknowledged_by_retrying(
            lambda: self.pipeline().append(SCOPE, event, POLICY, idempotency_key=key), self.restart
        )
        self.acknowledged.append(appended.event.event_id)
        return appended

    def turns(self, window: str, arm: Callable[[], AbstractContextManager[Any]]) -> None:
        events = [turn(role, text, self.clock) for role, text in TURNS]
        for index, event in enumerate(events):
            claiming = index == len(events) - 1
            if (window == "plain-append" and index == 1) or (
                window == "claiming-append" and claiming
            ):
                with arm():
                    self.send(index, event)
            else:
                self.send(index, event)
        # The same requests again (a client that never heard its answers): nothing changes.
        assert len(set(self.acknowledged)) == len(events)


def assert_all_consumed(stores: Stores, acknowledged: list[str], rollout_ids: list[str]) -> None:
    rollouts = stores.rollouts
    assert rollouts is not None
    assert rollouts.list_pending(SCOPE) == ()
    assert [rollouts.get(SCOPE, r).state for r in rollout_ids] == [RolloutState.CONSUMED]
    assert_accounted_for(stores, SCOPE, acknowledged, rollout_ids)
    (rollout_id,) = rollout_ids
    assert_remembered(live_records(stores), rollout_id)


# --- on moto ----------------------------------------------------------------------------------


def deliver_or_die(extraction_lambda: LambdaRuntime) -> None:
    """One receive and invocation; a killed invocation leaves its messages to come back when
    their visibility timeout ends (here: at once)."""
    messages = extraction_lambda.receive()
    if not messages:
        return
    try:
        extraction_lambda.deliver(messages)
    except Killed:
        for message in messages:
            extraction_lambda.sqs.change_message_visibility(
                QueueUrl=extraction_lambda.deployment.queue_url,
                ReceiptHandle=message["ReceiptHandle"],
                VisibilityTimeout=0,
            )


def recover_on_aws(
    stores: Stores, extraction_lambda: LambdaRuntime, sweep_lambda: Any, clock: FixedClock
) -> None:
    rollouts = stores.rollouts
    assert rollouts is not None
    for _ in range(3):
        for _ in range(5):
            deliver_or_die(extraction_lambda)
        if not rollouts.list_pending(SCOPE):
            return
        clock.advance(REDELIVER_AFTER)
        sweep_lambda({}, LambdaContext())


AWS_CELLS = [
    (step, fault)
    for step in AWS_TARGETS
    for fault in ("killed-before", "killed-after", "raised", "throttled", "timeout", "answer-lost")
]


def _aws_marks(step: str, fault: str) -> Any:
    return pytest.param(
        step, fault, id=f"{step}-{fault}", marks=pytest.mark.fault(step, fault, "dynamodb")
    )


@pytest.mark.parametrize(("step", "fault"), [_aws_marks(s, f) for s, f in AWS_CELLS])
def test_a_fault_at_a_step_on_aws_is_recovered_with_nothing_lost_or_doubled(
    step: str,
    fault: str,
    deployment: Any,
    extraction_lambda: LambdaRuntime,
    sweep_lambda: Any,
    clock: FixedClock,
) -> None:
    from functions._common import wiring

    service, operation, skip = AWS_TARGETS[step]
    injected = AwsFault(service, operation, fault, skip=skip)
    injected.install(wiring.client(service))

    @contextmanager
    def arm() -> Iterator[None]:
        injected.armed = True
        yield
        injected.armed = False

    conversation = Conversation(clock, wiring.pipeline, restart=lambda: None)
    conversation.turns(WINDOW[step], arm)
    stores = wiring.stores()
    assert stores.rollouts is not None
    rollout_ids = [r.rollout_id for r in stores.rollouts.list_pending(SCOPE)]

    if WINDOW[step] == "delivery":
        with arm():
            deliver_or_die(extraction_lambda)
    recover_on_aws(stores, extraction_lambda, sweep_lambda, clock)

    assert injected.fired == 1  # the fault happened, at the step it names
    assert_all_consumed(stores, conversation.acknowledged, rollout_ids)


# --- on SQLite --------------------------------------------------------------------------------


def busy() -> sqlite3.OperationalError:
    error = sqlite3.OperationalError("database is locked")
    error.sqlite_errorcode = sqlite3.SQLITE_BUSY  # type: ignore[attr-defined]
    error.sqlite_errorname = "SQLITE_BUSY"  # type: ignore[attr-defined]
    return error


def io_error() -> sqlite3.OperationalError:
    error = sqlite3.OperationalError("disk I/O error")
    error.sqlite_errorcode = sqlite3.SQLITE_IOERR  # type: ignore[attr-defined]
    error.sqlite_errorname = "SQLITE_IOERR"  # type: ignore[attr-defined]
    return error


@dataclass
class SqliteFault:
    """One fault at the ``skip``-th write transaction once armed."""

    fault: str
    skip: int
    path: Path
    armed: bool = False
    seen: int = 0
    fired: int = 0

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        original = SQLiteDatabase.transaction
        fault = self

        @contextmanager
        def transaction(
            db: SQLiteDatabase, *, write: bool, fsync: bool = True
        ) -> Iterator[sqlite3.Connection]:
            due = write and fault._due()
            if due and fault.fault == "killed-before":
                raise Killed("before BEGIN")
            if due and fault.fault == "timeout":
                holder = sqlite3.connect(fault.path, timeout=0, isolation_level=None)
                holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock throughout
                try:
                    with original(db, write=write, fsync=fsync) as conn:
                        yield conn
                finally:
                    holder.execute("ROLLBACK")
                    holder.close()
                return
            with original(db, write=write, fsync=fsync) as conn:
                yield conn
                if due and fault.fault == "raised":
                    raise io_error()
                if due and fault.fault == "throttled":
                    raise busy()
            if due and fault.fault == "killed-after":
                raise Killed("after COMMIT")

        monkeypatch.setattr(SQLiteDatabase, "transaction", transaction)

    def _due(self) -> bool:
        if not self.armed or self.fired:
            return False
        self.seen += 1
        if self.seen <= self.skip:
            return False
        self.fired += 1
        return True


class MortalExecutor(Executor):
    """Runs each pass in the caller's thread; a pass killed takes the process with it (a
    future would keep the ``Killed`` as the pass's outcome and the process alive)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_running_or_notify_cancel()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:  # what the worker itself does not catch
            future.set_exception(exc)
        return future


@dataclass
class EmbeddedProcess:
    """The embedded system on one store file, replaced by a new one when it is killed."""

    root: Path
    clock: FixedClock
    model: Any
    current: EmbeddedExtraction | None = None
    dead: list[EmbeddedExtraction] = field(default_factory=list)

    def start(self) -> EmbeddedExtraction:
        stores = SQLiteBackend(self.root / "cairn.db", self.clock, busy_timeout=0.2).stores()
        self.current = wire_embedded(
            stores,
            FilesystemStagingStore(self.root / "cairn.db-rollouts"),
            model=self.model,
            embedder=HashingEmbedder(),
            clock=self.clock,
            consolidation_executor=MortalExecutor(),
        )
        return self.current

    def restart(self) -> None:
        assert self.current is not None
        self.dead.append(self.current)
        self.start()

    @property
    def now(self) -> EmbeddedExtraction:
        assert self.current is not None
        return self.current

    def run_surviving(self) -> None:
        try:
            self.now.worker.run_once()
        except Killed:
            self.restart()

    def consolidate_surviving(self) -> None:
        assert self.now.consolidation is not None
        try:
            self.now.consolidation.run_once()
        except Killed:
            self.restart()

    def close(self) -> None:
        for process in self.dead:
            process.stores.close()
        if self.current is not None:
            self.current.close()


SQLITE_FAULTS = ("killed-before", "killed-after", "raised", "throttled", "timeout")


@pytest.fixture
def process(tmp_path: Path, clock: FixedClock, model: SwitchableModel) -> Iterator[EmbeddedProcess]:
    made = EmbeddedProcess(tmp_path, clock, model)
    made.start()
    yield made
    made.close()


def _sqlite_marks(step: str, fault: str) -> Any:
    return pytest.param(
        step, fault, id=f"{step}-{fault}", marks=pytest.mark.fault(step, fault, "sqlite")
    )


@pytest.mark.parametrize(
    ("step", "fault"), [_sqlite_marks(s, f) for s in SQLITE_TARGETS for f in SQLITE_FAULTS]
)
def test_a_fault_at_a_step_on_sqlite_is_recovered_with_nothing_lost_or_doubled(
    step: str,
    fault: str,
    process: EmbeddedProcess,
    clock: FixedClock,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    injected = SqliteFault(fault, SQLITE_TARGETS[step], tmp_path / "cairn.db")
    injected.install(monkeypatch)

    @contextmanager
    def arm() -> Iterator[None]:
        injected.armed = True
        yield
        injected.armed = False

    assert process.now.worker.run_once() == []  # started: its start-up catch-up found nothing
    conversation = Conversation(clock, lambda: process.now.pipeline, restart=process.restart)
    conversation.turns(WINDOW[step], arm)
    rollouts = process.now.stores.rollouts
    assert rollouts is not None
    rollout_ids = [r.rollout_id for r in rollouts.list_pending(SCOPE)]

    if WINDOW[step] == "delivery":
        with arm():
            process.run_surviving()
    for _ in range(3):  # the worker's retries and sweeps, on the clock
        process.run_surviving()
        clock.advance(REDELIVER_AFTER)
    process.run_surviving()

    assert injected.fired == 1
    assert_all_consumed(process.now.stores, conversation.acknowledged, rollout_ids)


# --- consolidation commit -------------------------------------------------------------------

CONSOLIDATION_FAULTS = ("killed-before", "killed-after", "raised", "throttled", "timeout")


def assert_pass_applied_once(
    stores: Stores, evidence_id: str, embedder: HashingEmbedder, clock: FixedClock
) -> None:
    """The pass applied whole (old preference superseded and linked, the new one live), once
    (no record doubled), and its evidence consumed."""
    assert_resolved(stores, evidence_id, embedder, clock)
    digests = [r.content_digest for r in live_records(stores)]
    assert len(digests) == len(set(digests)), "a record was doubled"
    rollouts = stores.rollouts
    assert rollouts is not None
    assert rollouts.get(SCOPE, evidence_id).state is RolloutState.CONSUMED
    assert rollouts.list_pending(SCOPE, kind="evidence") == ()


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(f, marks=pytest.mark.fault("consolidation", f, "dynamodb"))
        for f in (*CONSOLIDATION_FAULTS, "answer-lost")
    ],
)
def test_a_fault_at_the_consolidation_commit_on_aws_applies_the_pass_once(
    fault: str,
    deployment: Any,
    session: Any,
    extraction_lambda: LambdaRuntime,
    sweep_lambda: Any,
    model: SwitchableModel,
    clock: FixedClock,
    embedder: HashingEmbedder,
) -> None:
    import importlib

    from functions._common import wiring
    from tests.pipeline.test_consolidation_aws import _session

    handler = importlib.import_module("functions.consolidation.handler")
    consolidation = LambdaRuntime(
        session.client("sqs"), deployment.consolidation(), handler.lambda_handler
    )
    model.inner = ScenarioModel()
    stores = wiring.stores()
    assert stores.memories is not None
    stores.memories.create(MEMORY)
    hold_run(_session(embedder, clock, 1), RUN_1, clock)
    assert extraction_lambda.poll() == []
    assert consolidation.poll() == []
    clock.advance(timedelta(days=60))
    evidence_id = hold_run(_session(embedder, clock, 2), RUN_2, clock)
    assert evidence_id is not None
    assert extraction_lambda.poll() == []
    injected = AwsFault("dynamodb", "TransactWriteItems", fault)  # the commit: one transaction
    injected.install(wiring.client("dynamodb"))

    injected.armed = True
    deliver_or_die(consolidation)
    injected.armed = False
    for _ in range(3):
        for _ in range(3):
            deliver_or_die(consolidation)
        clock.advance(REDELIVER_AFTER)
        sweep_lambda({}, LambdaContext())

    assert injected.fired == 1
    assert_pass_applied_once(stores, evidence_id, embedder, clock)


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(f, marks=pytest.mark.fault("consolidation", f, "sqlite"))
        for f in CONSOLIDATION_FAULTS
    ],
)
def test_a_fault_at_the_consolidation_commit_on_sqlite_applies_the_pass_once(
    fault: str, tmp_path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = HashingEmbedder()
    process = EmbeddedProcess(tmp_path, clock, ScenarioModel())
    wired = process.start()
    try:
        assert wired.stores.memories is not None
        wired.stores.memories.create(MEMORY)

        def session(day: int) -> Any:
            return process.now.session(
                memory_id=SCOPE.memory_id,
                actor_id=SCOPE.actor_id,
                session_id=f"day-{day}",
                embedder=embedder,
            )

        hold_run(session(1), RUN_1, clock)
        process.run_surviving()
        clock.advance(CONSOLIDATION_WINDOW)
        process.consolidate_surviving()
        clock.advance(timedelta(days=60))
        evidence_id = hold_run(session(2), RUN_2, clock)
        assert evidence_id is not None
        process.run_surviving()
        injected = SqliteFault(fault, 0, tmp_path / "cairn.db")  # the commit: the first write
        injected.install(monkeypatch)

        clock.advance(CONSOLIDATION_WINDOW)
        injected.armed = True
        process.consolidate_surviving()
        injected.armed = False
        for _ in range(3):  # the pass's retry, then the sweep's re-announcement
            clock.advance(REDELIVER_AFTER)
            process.run_surviving()
            process.consolidate_surviving()

        assert injected.fired == 1
        assert_pass_applied_once(process.now.stores, evidence_id, embedder, clock)
    finally:
        process.close()


# --- duplicate requests ----------------------------------------------------------------------


def send_every_turn_twice(
    conversation: Conversation, pipeline: Callable[[], RolloutPipeline]
) -> None:
    """Each turn arrives twice with its idempotency key (a client resending after the first
    answer was lost on the way): the second is the first event, and claims nothing."""
    events = [turn(role, text, conversation.clock) for role, text in TURNS]
    claims = []
    for index, event in enumerate(events):
        first = conversation.send(index, event)
        again = pipeline().append(SCOPE, event, POLICY, idempotency_key=f"{index + 1:064x}")
        assert again.event.event_id == first.event.event_id
        assert again.claim is None
        claims.append(first.claim)
    assert [c is not None for c in claims] == [False] * (len(events) - 1) + [True]


@pytest.mark.fault("event-append", "duplicate", "dynamodb")
@pytest.mark.fault("trigger", "duplicate", "dynamodb")
def test_every_request_sent_twice_on_aws_is_one_event_counted_once(
    deployment: Any, extraction_lambda: LambdaRuntime, sweep_lambda: Any, clock: FixedClock
) -> None:
    from functions._common import wiring

    conversation = Conversation(clock, wiring.pipeline, restart=lambda: None)
    send_every_turn_twice(conversation, wiring.pipeline)
    stores = wiring.stores()
    assert stores.rollouts is not None
    rollout_ids = [r.rollout_id for r in stores.rollouts.list_pending(SCOPE)]
    recover_on_aws(stores, extraction_lambda, sweep_lambda, clock)

    assert len(stores.events.list_events(SCOPE, "chat-1").items) == len(TURNS)
    assert_all_consumed(stores, conversation.acknowledged, rollout_ids)


@pytest.mark.fault("event-append", "duplicate", "sqlite")
@pytest.mark.fault("trigger", "duplicate", "sqlite")
def test_every_request_sent_twice_on_sqlite_is_one_event_counted_once(
    process: EmbeddedProcess, clock: FixedClock
) -> None:
    conversation = Conversation(clock, lambda: process.now.pipeline, restart=process.restart)
    send_every_turn_twice(conversation, lambda: process.now.pipeline)
    rollouts = process.now.stores.rollouts
    assert rollouts is not None
    rollout_ids = [r.rollout_id for r in rollouts.list_pending(SCOPE)]
    process.run_surviving()

    assert len(process.now.stores.events.list_events(SCOPE, "chat-1").items) == len(TURNS)
    assert_all_consumed(process.now.stores, conversation.acknowledged, rollout_ids)


# --- erase -----------------------------------------------------------------------------------

OTHER = SCOPE.model_copy(update={"actor_id": "tg:99999"})  # an actor the erase must not touch
ERASED_TURN = "My passport number is X1234567."
ERASE_FAULTS = ("killed-before", "killed-after", "raised", "throttled", "timeout")
# The writes an actor's erase makes on DynamoDB; the fault hits the second (midway: the rollout
# index is gone, the events, records and journal are not yet).
ERASE_WRITES = "BatchWriteItem|TransactWriteItems|DeleteItem|PutItem|UpdateItem"


def remember_both_actors(
    pipeline: Callable[[], RolloutPipeline], clock: FixedClock, deliver: Callable[[], None]
) -> None:
    for scope in (SCOPE, OTHER):
        for role, text in TURNS:
            pipeline().append(scope, turn(role, text, clock), POLICY)
    deliver()
    pipeline().append(SCOPE, turn(Role.USER, ERASED_TURN, clock), POLICY)  # not extracted yet


def erased_by_retrying(erase: Callable[[], Any], restart: Callable[[], None]) -> Any:
    """The operator (``cairn erase``, DeleteMemory) runs the erase again until it finishes."""
    return acknowledged_by_retrying(erase, restart)


def assert_erased_and_other_intact(
    stores: Stores, journal_id: str, other_records: list[str]
) -> None:
    assert stores.events.list_sessions(SCOPE).items == ()
    assert live_records(stores, SCOPE) == []
    assert stores.rollouts is not None
    assert stores.rollouts.list_pending(SCOPE) == ()
    with pytest.raises(JournalNotFoundError):
        stores.journal.get(SCOPE, journal_id)
    assert len(stores.events.list_events(OTHER, "chat-1").items) == len(TURNS)
    assert sorted(r.content_digest for r in live_records(stores, OTHER)) == other_records


def journalled_recall(stores: Stores, clock: FixedClock, scope: Scope = SCOPE) -> Any:
    return recall(
        scope,
        RecallQuery(text="Where is the user's office?"),
        stores=stores,
        embedder=HashingEmbedder(),
        clock=clock,
    )


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(f, marks=pytest.mark.fault("erase", f, "dynamodb"))
        for f in (*ERASE_FAULTS, "answer-lost")
    ],
)
def test_an_erase_that_fails_midway_on_aws_is_finished_by_running_it_again(
    fault: str, deployment: Any, session: Any, extraction_lambda: LambdaRuntime, clock: FixedClock
) -> None:
    from functions._common import wiring

    stores = wiring.stores()
    remember_both_actors(wiring.pipeline, clock, lambda: deliver_or_die(extraction_lambda))
    assert live_records(stores, SCOPE)
    journal_id = journalled_recall(stores, clock).journal_id
    other_records = sorted(r.content_digest for r in live_records(stores, OTHER))
    injected = AwsFault("dynamodb", ERASE_WRITES, fault, skip=1)
    injected.install(wiring.client("dynamodb"))

    injected.armed = True
    erased = erased_by_retrying(
        lambda: erase_actor(wiring.stores(), SCOPE, staging=wiring.staging()), lambda: None
    )
    injected.armed = False

    assert injected.fired == 1
    assert erased.events in (0, len(TURNS) + 1)  # by the run that finished, or one before
    assert_erased_and_other_intact(stores, journal_id, other_records)
    tables = [
        item
        for table in (deployment.items_table, deployment.events_table)
        for item in session.client("dynamodb").scan(TableName=table)["Items"]
    ]
    assert ERASED_TURN not in repr(tables)  # no copy of the erased conversation left
    assert all(
        not key.startswith(scope_prefix(SCOPE))
        for key in (
            o["Key"]
            for o in session.client("s3")
            .list_objects_v2(Bucket=deployment.bucket)
            .get("Contents", [])
        )
    )


@pytest.mark.parametrize(
    "fault", [pytest.param(f, marks=pytest.mark.fault("erase", f, "sqlite")) for f in ERASE_FAULTS]
)
def test_an_erase_that_fails_midway_on_sqlite_is_finished_by_running_it_again(
    fault: str,
    process: EmbeddedProcess,
    clock: FixedClock,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    remember_both_actors(lambda: process.now.pipeline, clock, process.run_surviving)
    stores = process.now.stores
    assert live_records(stores, SCOPE)
    journal_id = journalled_recall(stores, clock).journal_id
    other_records = sorted(r.content_digest for r in live_records(stores, OTHER))
    # The third write transaction of the erase: the records (rollouts and events gone already).
    injected = SqliteFault(fault, 2, tmp_path / "cairn.db")
    injected.install(monkeypatch)

    injected.armed = True
    erased_by_retrying(
        lambda: erase_actor(process.now.stores, SCOPE, staging=process.now.pipeline.staging),
        process.restart,
    )
    injected.armed = False

    assert injected.fired == 1
    assert_erased_and_other_intact(process.now.stores, journal_id, other_records)
    with sqlite3.connect(tmp_path / "cairn.db") as reader:
        dumped = "\n".join(reader.iterdump())
    assert ERASED_TURN not in dumped
    staged = [p.name for p in (tmp_path / "cairn.db-rollouts").rglob("*") if p.is_file()]
    assert all(SCOPE.actor_id not in name for name in staged)


# --- journal ---------------------------------------------------------------------------------

JOURNAL_FAULTS = ("killed-before", "killed-after", "raised", "throttled", "timeout")


def assert_journal_whole(stores: Stores, answered: Any, entries: list[str]) -> None:
    """The acknowledged recall's entry replays to the very block it returned; every entry in
    the journal replays (no half-written one)."""
    assert answered.journal_id in entries
    for journal_id in entries:
        replayed = replay(SCOPE, journal_id, stores=stores)
        assert replayed.matches, journal_id
    assert replay(SCOPE, answered.journal_id, stores=stores).block == answered.block


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(f, marks=pytest.mark.fault("journal", f, "dynamodb"))
        for f in (*JOURNAL_FAULTS, "answer-lost")
    ],
)
def test_a_fault_at_the_journal_write_on_aws_leaves_the_answered_recall_replayable(
    fault: str, deployment: Any, session: Any, extraction_lambda: LambdaRuntime, clock: FixedClock
) -> None:
    from functions._common import wiring

    stores = wiring.stores()
    for role, text in TURNS:
        wiring.pipeline().append(SCOPE, turn(role, text, clock), POLICY)
    deliver_or_die(extraction_lambda)
    # The entry and its chain head: one TransactWriteItems.
    injected = AwsFault("dynamodb", "TransactWriteItems", fault)
    injected.install(wiring.client("dynamodb"))

    injected.armed = True
    answered = acknowledged_by_retrying(lambda: journalled_recall(stores, clock), lambda: None)
    injected.armed = False

    assert injected.fired == 1
    items = session.client("dynamodb").scan(TableName=deployment.items_table)["Items"]
    entries = [i["sk"]["S"].split("#", 1)[1] for i in items if i["sk"]["S"].startswith("J#")]
    # Killed after the commit, the retry is a new recall with its own entry; a lost answer is
    # found committed by the store itself, and acknowledged once.
    assert len(entries) == (2 if fault == "killed-after" else 1), entries
    assert_journal_whole(stores, answered, entries)


@pytest.mark.parametrize(
    "fault",
    [pytest.param(f, marks=pytest.mark.fault("journal", f, "sqlite")) for f in JOURNAL_FAULTS],
)
def test_a_fault_at_the_journal_write_on_sqlite_leaves_the_answered_recall_replayable(
    fault: str,
    process: EmbeddedProcess,
    clock: FixedClock,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for role, text in TURNS:
        process.now.pipeline.append(SCOPE, turn(role, text, clock), POLICY)
    process.run_surviving()
    injected = SqliteFault(fault, 0, tmp_path / "cairn.db")  # the recall's one write: the entry
    injected.install(monkeypatch)

    injected.armed = True
    answered = acknowledged_by_retrying(
        lambda: journalled_recall(process.now.stores, clock), process.restart
    )
    injected.armed = False

    assert injected.fired == 1
    with sqlite3.connect(tmp_path / "cairn.db") as reader:
        entries = [row[0] for row in reader.execute("SELECT journal_id FROM journal")]
    assert len(entries) == (2 if fault == "killed-after" else 1), entries
    assert_journal_whole(process.now.stores, answered, entries)


# --- extraction: the model call ----------------------------------------------------------------


@dataclass
class ModelFault:
    """The extraction model, with one fault on its first call: the process killed before the
    request or after the answer, the provider throttling, or the answer lost after the
    provider produced (and billed) it."""

    inner: Any
    fault: str
    fired: int = 0

    def complete(self, request: Any) -> Any:
        if self.fired:
            return self.inner.complete(request)
        self.fired += 1
        if self.fault == "killed-before":
            raise Killed("before the model call")
        if self.fault == "throttled":
            raise ModelUnavailableError("the model provider is throttling; retry later")
        self.inner.complete(request)  # answered (and billed); what follows loses it
        if self.fault == "killed-after":
            raise Killed("after the model answered")
        raise ModelTimeoutError("the model's answer never arrived")  # answer-lost


MODEL_FAULTS = ("killed-before", "killed-after", "throttled", "answer-lost")


def nothing_armed() -> AbstractContextManager[None]:
    return nullcontext()


@pytest.mark.parametrize(
    "fault",
    [pytest.param(f, marks=pytest.mark.fault("extraction", f, "dynamodb")) for f in MODEL_FAULTS],
)
def test_a_fault_at_the_model_call_on_aws_is_recovered_with_nothing_lost_or_doubled(
    fault: str,
    deployment: Any,
    extraction_lambda: LambdaRuntime,
    sweep_lambda: Any,
    model: SwitchableModel,
    clock: FixedClock,
) -> None:
    from functions._common import wiring

    conversation = Conversation(clock, wiring.pipeline, restart=lambda: None)
    conversation.turns("none", nothing_armed)
    stores = wiring.stores()
    assert stores.rollouts is not None
    rollout_ids = [r.rollout_id for r in stores.rollouts.list_pending(SCOPE)]
    injected = ModelFault(model.inner, fault)
    model.inner = injected

    recover_on_aws(stores, extraction_lambda, sweep_lambda, clock)

    assert injected.fired == 1
    assert_all_consumed(stores, conversation.acknowledged, rollout_ids)


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(f, marks=pytest.mark.fault("extraction", f, "sqlite"))
        for f in ("throttled", "answer-lost")
    ],
)
def test_a_fault_at_the_model_call_on_sqlite_is_recovered_with_nothing_lost_or_doubled(
    fault: str, process: EmbeddedProcess, model: SwitchableModel, clock: FixedClock
) -> None:
    conversation = Conversation(clock, lambda: process.now.pipeline, restart=process.restart)
    conversation.turns("none", nothing_armed)
    rollouts = process.now.stores.rollouts
    assert rollouts is not None
    rollout_ids = [r.rollout_id for r in rollouts.list_pending(SCOPE)]
    injected = ModelFault(model.inner, fault)
    model.inner = injected

    for _ in range(3):
        process.run_surviving()
        clock.advance(REDELIVER_AFTER)
    process.run_surviving()

    assert injected.fired == 1
    assert_all_consumed(process.now.stores, conversation.acknowledged, rollout_ids)


# --- duplicates past the append ----------------------------------------------------------------


@dataclass
class Released:
    """The conversation, appended and released; its one rollout as it was claimed."""

    conversation: Conversation
    claim: Rollout


def converse_and_release(
    clock: FixedClock, pipeline: Callable[[], RolloutPipeline], restart: Callable[[], None]
) -> Released:
    conversation = Conversation(clock, pipeline, restart=restart)
    events = [turn(role, text, clock) for role, text in TURNS]
    appended = [conversation.send(index, event) for index, event in enumerate(events)]
    claim = appended[-1].claim
    assert claim is not None
    assert claim.state is RolloutState.CLAIMED
    return Released(conversation, claim)


def release_again(pipeline: RolloutPipeline, released: Released, step: str) -> None:
    """The duplicate: a second releaser (a sweep that read the rollout before the appender
    moved it) stages it again from its stale copy, or the notice is published once more."""
    if step == "staging":
        pipeline.release_quietly(released.claim)
    else:
        announced = pipeline.rollouts.get(SCOPE, released.claim.rollout_id)
        assert announced.state is RolloutState.ANNOUNCED
        pipeline.announce(announced)


@pytest.mark.fault("staging", "duplicate", "dynamodb")
@pytest.mark.fault("publish", "duplicate", "dynamodb")
@pytest.mark.parametrize("step", ["staging", "publish"])
def test_a_rollout_released_twice_on_aws_is_consumed_once(
    step: str,
    deployment: Any,
    extraction_lambda: LambdaRuntime,
    sweep_lambda: Any,
    clock: FixedClock,
) -> None:
    from functions._common import wiring

    released = converse_and_release(clock, wiring.pipeline, lambda: None)
    release_again(wiring.pipeline(), released, step)
    stores = wiring.stores()
    recover_on_aws(stores, extraction_lambda, sweep_lambda, clock)

    assert_all_consumed(stores, released.conversation.acknowledged, [released.claim.rollout_id])


@pytest.mark.fault("staging", "duplicate", "sqlite")
@pytest.mark.fault("publish", "duplicate", "sqlite")
@pytest.mark.parametrize("step", ["staging", "publish"])
def test_a_rollout_released_twice_on_sqlite_is_consumed_once(
    step: str, process: EmbeddedProcess, clock: FixedClock
) -> None:
    released = converse_and_release(clock, lambda: process.now.pipeline, process.restart)
    release_again(process.now.pipeline, released, step)
    for _ in range(2):
        process.run_surviving()
        clock.advance(REDELIVER_AFTER)

    assert_all_consumed(
        process.now.stores, released.conversation.acknowledged, [released.claim.rollout_id]
    )


@pytest.mark.fault("formation", "duplicate", "dynamodb")
def test_a_notice_delivered_twice_in_one_batch_on_aws_forms_its_records_once(
    deployment: Any, extraction_lambda: LambdaRuntime, clock: FixedClock
) -> None:
    from functions._common import wiring

    released = converse_and_release(clock, wiring.pipeline, lambda: None)
    (message,) = extraction_lambda.receive()
    twin = {**message, "MessageId": f"{message['MessageId']}-again"}  # at-least-once delivery

    assert extraction_lambda.deliver([message, twin]) == []

    stores = wiring.stores()
    assert_all_consumed(stores, released.conversation.acknowledged, [released.claim.rollout_id])


@pytest.mark.fault("formation", "duplicate", "sqlite")
def test_a_notice_queued_twice_on_sqlite_forms_its_records_once(
    process: EmbeddedProcess, clock: FixedClock
) -> None:
    released = converse_and_release(clock, lambda: process.now.pipeline, process.restart)
    rollouts = process.now.stores.rollouts
    assert rollouts is not None
    announced = rollouts.get(SCOPE, released.claim.rollout_id)
    assert announced.staging_key is not None
    notice = RolloutNotice.of(SCOPE, announced.rollout_id, announced.staging_key)
    process.now.worker.notifier.announce(notice)  # queued twice: the appender's and this one

    handled = process.now.worker.run_once()

    assert [h.status for h in handled] == ["consumed", "duplicate"]
    assert_all_consumed(
        process.now.stores, released.conversation.acknowledged, [released.claim.rollout_id]
    )


@pytest.mark.fault("erase", "duplicate", "dynamodb")
def test_an_erase_sent_twice_on_aws_erases_once_and_touches_nothing_else(
    deployment: Any, extraction_lambda: LambdaRuntime, clock: FixedClock
) -> None:
    from functions._common import wiring

    stores = wiring.stores()
    remember_both_actors(wiring.pipeline, clock, lambda: deliver_or_die(extraction_lambda))
    journal_id = journalled_recall(stores, clock).journal_id
    other_records = sorted(r.content_digest for r in live_records(stores, OTHER))

    first = erase_actor(stores, SCOPE, staging=wiring.staging())
    tombstones = stores.records.list_records(SCOPE, include_inactive=True, limit=1000).items
    again = erase_actor(stores, SCOPE, staging=wiring.staging())

    assert first.events == len(TURNS) + 1
    assert (again.events, again.rollouts, again.payloads, again.journal_entries) == (0, 0, 0, 0)
    # Tombstoning a tombstone changes nothing (the report names the same records again).
    assert again.records.record_ids == first.records.record_ids
    assert stores.records.list_records(SCOPE, include_inactive=True, limit=1000).items == tombstones
    assert_erased_and_other_intact(stores, journal_id, other_records)


@pytest.mark.fault("erase", "duplicate", "sqlite")
def test_an_erase_sent_twice_on_sqlite_erases_once_and_touches_nothing_else(
    process: EmbeddedProcess, clock: FixedClock
) -> None:
    remember_both_actors(lambda: process.now.pipeline, clock, process.run_surviving)
    stores = process.now.stores
    journal_id = journalled_recall(stores, clock).journal_id
    other_records = sorted(r.content_digest for r in live_records(stores, OTHER))

    first = erase_actor(stores, SCOPE, staging=process.now.pipeline.staging)
    tombstones = stores.records.list_records(SCOPE, include_inactive=True, limit=1000).items
    again = erase_actor(stores, SCOPE, staging=process.now.pipeline.staging)

    assert first.events == len(TURNS) + 1
    assert (again.events, again.rollouts, again.payloads, again.journal_entries) == (0, 0, 0, 0)
    # Tombstoning a tombstone changes nothing (the report names the same records again).
    assert again.records.record_ids == first.records.record_ids
    assert stores.records.list_records(SCOPE, include_inactive=True, limit=1000).items == tombstones
    assert_erased_and_other_intact(stores, journal_id, other_records)


@pytest.mark.fault("journal", "duplicate", "dynamodb")
def test_a_journal_entry_written_twice_on_aws_is_one_entry(
    deployment: Any, session: Any, extraction_lambda: LambdaRuntime, clock: FixedClock
) -> None:
    from functions._common import wiring

    stores = wiring.stores()
    for role, text in TURNS:
        wiring.pipeline().append(SCOPE, turn(role, text, clock), POLICY)
    deliver_or_die(extraction_lambda)
    answered = journalled_recall(stores, clock)

    stores.journal.put(stores.journal.get(SCOPE, answered.journal_id))  # the write resent

    items = session.client("dynamodb").scan(TableName=deployment.items_table)["Items"]
    entries = [i["sk"]["S"].split("#", 1)[1] for i in items if i["sk"]["S"].startswith("J#")]
    assert entries == [answered.journal_id]
    assert_journal_whole(stores, answered, entries)


@pytest.mark.fault("journal", "duplicate", "sqlite")
def test_a_journal_entry_written_twice_on_sqlite_is_one_entry(
    process: EmbeddedProcess, clock: FixedClock, tmp_path: Path
) -> None:
    for role, text in TURNS:
        process.now.pipeline.append(SCOPE, turn(role, text, clock), POLICY)
    process.run_surviving()
    stores = process.now.stores
    answered = journalled_recall(stores, clock)

    stores.journal.put(stores.journal.get(SCOPE, answered.journal_id))  # the write resent

    with sqlite3.connect(tmp_path / "cairn.db") as reader:
        entries = [row[0] for row in reader.execute("SELECT journal_id FROM journal")]
    assert entries == [answered.journal_id]
    assert_journal_whole(stores, answered, entries)


@pytest.mark.fault("consolidation", "duplicate", "dynamodb")
def test_an_evidence_notice_delivered_again_on_aws_applies_its_pass_once(
    deployment: Any,
    session: Any,
    extraction_lambda: LambdaRuntime,
    model: SwitchableModel,
    clock: FixedClock,
    embedder: HashingEmbedder,
) -> None:
    import importlib

    from functions._common import wiring
    from tests.pipeline.test_consolidation_aws import _session

    handler = importlib.import_module("functions.consolidation.handler")
    queue = deployment.consolidation()
    consolidation = LambdaRuntime(session.client("sqs"), queue, handler.lambda_handler)
    scenario = ScenarioModel()
    model.inner = scenario
    stores = wiring.stores()
    assert stores.memories is not None
    stores.memories.create(MEMORY)
    hold_run(_session(embedder, clock, 1), RUN_1, clock)
    assert extraction_lambda.poll() == []
    assert consolidation.poll() == []
    clock.advance(timedelta(days=60))
    evidence_id = hold_run(_session(embedder, clock, 2), RUN_2, clock)
    assert evidence_id is not None
    assert extraction_lambda.poll() == []
    (message,) = consolidation.receive()
    assert consolidation.deliver([message]) == []
    applied = sorted((r.record_id, r.version) for r in live_records(stores))

    session.client("sqs").send_message(  # delivered at least once: the same notice again
        QueueUrl=queue.queue_url,
        MessageBody=message["Body"],
        MessageGroupId=message["Attributes"]["MessageGroupId"],
        MessageDeduplicationId="redelivery-1",
    )
    assert consolidation.poll() == []

    assert len(scenario.consolidation_requests) == 2  # no second pass over the same evidence
    assert sorted((r.record_id, r.version) for r in live_records(stores)) == applied
    assert_pass_applied_once(stores, evidence_id, embedder, clock)


@pytest.mark.fault("consolidation", "duplicate", "sqlite")
def test_an_evidence_notice_announced_again_on_sqlite_applies_its_pass_once(
    tmp_path: Path, clock: FixedClock
) -> None:
    embedder = HashingEmbedder()
    scenario = ScenarioModel()
    process = EmbeddedProcess(tmp_path, clock, scenario)
    wired = process.start()
    try:
        assert wired.stores.memories is not None
        wired.stores.memories.create(MEMORY)

        def session(day: int) -> Any:
            return wired.session(
                memory_id=SCOPE.memory_id,
                actor_id=SCOPE.actor_id,
                session_id=f"day-{day}",
                embedder=embedder,
            )

        hold_run(session(1), RUN_1, clock)
        process.run_surviving()
        clock.advance(CONSOLIDATION_WINDOW)
        process.consolidate_surviving()
        clock.advance(timedelta(days=60))
        evidence_id = hold_run(session(2), RUN_2, clock)
        assert evidence_id is not None
        process.run_surviving()
        clock.advance(CONSOLIDATION_WINDOW)
        process.consolidate_surviving()
        applied = sorted((r.record_id, r.version) for r in live_records(wired.stores))
        assert wired.stores.rollouts is not None
        evidence = wired.stores.rollouts.get(SCOPE, evidence_id)
        assert evidence.staging_key is not None
        assert wired.consolidation is not None

        notice = RolloutNotice.of(SCOPE, evidence_id, evidence.staging_key)
        wired.consolidation.notifier.announce(notice)  # the same notice once more
        clock.advance(CONSOLIDATION_WINDOW)
        process.consolidate_surviving()

        assert sorted((r.record_id, r.version) for r in live_records(wired.stores)) == applied
        assert_pass_applied_once(wired.stores, evidence_id, embedder, clock)
    finally:
        process.close()
