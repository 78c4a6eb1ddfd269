"""Erasing one record follows its lineage into everything that restates it, on every backend
(issue 17, class 7; ``cairn.erasure_lineage``): the session summary extracted from the same
turns, run evidence waiting for consolidation, the history chunks rolled up from the turns and,
by default, the turns themselves. Afterwards no byte of what was said is left in the SQLite
file, its WAL and the staging folder, nor in any DynamoDB item or S3 object on moto.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cairn.changes import Create, NewRecord
from cairn.clock import FixedClock
from cairn.consolidate.commit import Consolidator, consolidate_scope
from cairn.consolidate.evidence import (
    EvidenceStager,
    RunIdentity,
    TranscriptMessage,
    build_evidence,
)
from cairn.erasure_lineage import erase_record
from cairn.errors import RecordNotFoundError
from cairn.extract.delivery import build_consumer, consume
from cairn.extract.staging import RolloutPipeline
from cairn.history.rollup import roll_up_session
from cairn.local.offline import offline_model
from cairn.memories import StrategyKind
from cairn.model_request import ModelRequest
from cairn.models import Role, Scope, Source, SourceKind, Status
from cairn.ports import StagingStore, Stores
from cairn.rollout.index import Rollout, TriggerPolicy, new_evidence_id
from cairn.testing import ScriptedModel
from tests.conformance.erasure_scan import stored_bytes
from tests.conformance.rollout_samples import require_rollouts, turn
from tests.conformance.samples import create
from tests.conformance.test_erase_races import NEIGHBOUR, SCOPE, Notices
from tests.unit.consolidation_support import answer
from tests.unit.extraction_inputs import FACTS, SUMMARY, memory, strategy

SECRET = "Quixotic-Aubergine-Passport-8841"  # noqa: S105 - a test fact, no password
KEPT = "Plays-Ukulele-On-Thursdays-5127"
SUMMARISED = memory(
    strategy(FACTS, StrategyKind.SEMANTIC, "/facts/{actorId}/"),
    strategy(SUMMARY, StrategyKind.SUMMARY, "/summaries/{actorId}/{sessionId}/"),
)
POLICY = TriggerPolicy(strategy_ids=(FACTS, SUMMARY), message_count=2)
SAID = f"My passport number is {SECRET}."


def extract(
    stores: Stores, staging: StagingStore, clock: FixedClock, scope: Scope, text: str, session: str
) -> None:
    """Two turns of ``scope`` (the first says ``text``) extracted by the offline model into a
    fact and the session's summary, through the real pipeline."""
    notices = Notices()
    pipeline = RolloutPipeline(require_rollouts(stores, "this"), staging, notices, clock)
    pipeline.append(scope, turn(text, session_id=session, clock=clock), POLICY)
    pipeline.append(scope, turn("Thanks, that is all.", session_id=session, clock=clock), POLICY)
    (notice,) = notices.sent
    consumer = build_consumer(stores, staging, model=offline_model(), embedder=None, clock=clock)
    consumer = dataclasses.replace(consumer, memories=lambda _: SUMMARISED)
    assert consume(notice, consumer).status == "consumed"


def stage_run(
    stores: Stores, staging: StagingStore, clock: FixedClock, scope: Scope, *said: str
) -> Rollout:
    """A completed run of session s1 in which the user said ``said``, its evidence pending."""
    now = clock.now()
    stager = EvidenceStager(require_rollouts(stores, "this"), staging, Notices(), clock)
    transcript = [TranscriptMessage(role=Role.USER, text=text) for text in said]
    transcript.append(TranscriptMessage(role=Role.ASSISTANT, text="Noted."))
    identity = RunIdentity(
        scope=scope,
        session_id="s1",
        run_id=f"run-{int(now.timestamp() * 1000)}",
        rollout_id=new_evidence_id(now),
        completed_at=now,
    )
    clock.advance(seconds=1)
    return stager.stage(build_evidence(identity, transcript, "Noted."))


def remembered(
    stores: Stores, staging: StagingStore, clock: FixedClock, *, neighbour_says: str = SAID
) -> tuple[str, list[str]]:
    """The secret said in SCOPE's session s1: a fact, a summary, pending evidence of the run
    and history chunks rolled up from the turns; a hobby said in session s2 and by NEIGHBOUR.
    The fact's id and the ids of every record holding the secret."""
    extract(stores, staging, clock, SCOPE, SAID, "s1")
    extract(stores, staging, clock, SCOPE, f"My hobby is {KEPT}.", "s2")
    extract(stores, staging, clock, NEIGHBOUR, neighbour_says, "s1")
    stage_run(stores, staging, clock, SCOPE, SAID)
    stage_run(stores, staging, clock, SCOPE, f"Tell me about {KEPT}.")
    assert stores.chunks is not None
    for session in ("s1", "s2"):
        report = roll_up_session(
            stores.events, stores.chunks, offline_model(), SCOPE, session, clock=clock, fanout=2
        )
        assert report.chunks >= 1, report.skipped
    holding = [v for v in stores.records.list_records(SCOPE).items if SECRET in v.model_dump_json()]
    facts = [v.record_id for v in holding if v.strategy != "summary"]
    summaries = [v.record_id for v in holding if v.strategy == "summary"]
    assert (len(facts), len(summaries)) == (1, 1), [v.content for v in holding]
    return facts[0], facts + summaries


def test_erasing_a_fact_erases_its_summary_evidence_chunks_and_turns(
    stores: Stores, staging: StagingStore, clock: FixedClock
) -> None:
    fact, holding = remembered(stores, staging, clock)

    erased = erase_record(stores, SCOPE, fact, staging=staging, clock=clock)

    assert sorted(erased.record_ids) == sorted(holding)
    for record_id in holding:
        assert all(v.status is Status.ERASED for v in stores.records.history(SCOPE, record_id))
    live = [v.content for v in stores.records.list_records(SCOPE).items]
    assert all(SECRET not in c for c in live)
    assert any(KEPT in c for c in live)
    assert (erased.events, erased.rollouts) == (1, 1)
    assert stores.rollouts is not None
    (left,) = stores.rollouts.list_pending(SCOPE, kind="evidence")
    assert KEPT.encode() in staging.get(SCOPE, left.rollout_id)
    assert [e.payload[0].text for e in stores.events.list_events(SCOPE, "s1").items] == [
        "Thanks, that is all."
    ]
    assert stores.chunks is not None
    assert all(SECRET not in c.summary for c in stores.chunks.list_chunks(SCOPE, "s1"))
    assert stores.chunks.list_chunks(SCOPE, "s2")  # another session's history is untouched
    # Another actor who said the same keeps it: erasure never crosses a scope.
    assert any(SECRET in v.content for v in stores.records.list_records(NEIGHBOUR).items)


def test_keep_events_keeps_the_turns_and_nothing_else(
    stores: Stores, staging: StagingStore, clock: FixedClock
) -> None:
    fact, holding = remembered(stores, staging, clock)

    erased = erase_record(stores, SCOPE, fact, staging=staging, clock=clock, keep_events=True)

    assert sorted(erased.record_ids) == sorted(holding)
    assert (erased.events, erased.rollouts) == (0, 1)
    texts = [e.payload[0].text for e in stores.events.list_events(SCOPE, "s1").items]
    assert texts == [SAID, "Thanks, that is all."]
    assert stores.chunks is not None
    assert stores.chunks.list_chunks(SCOPE, "s1") == ()  # cut at the source turn


def test_a_byte_scan_after_erasing_one_record_finds_nothing_of_it(
    backend_name: str, stores: Stores, staging: StagingStore, clock: FixedClock, tmp_path: Path
) -> None:
    if backend_name == "memory":
        pytest.skip("the in-memory backend keeps no bytes to scan")
    fact, _ = remembered(stores, staging, clock, neighbour_says=f"My hobby is {KEPT}.")
    before = stored_bytes(backend_name, tmp_path)
    assert before.count(SECRET.encode()) >= 5  # the scan sees every copy it must then miss

    erase_record(stores, SCOPE, fact, staging=staging, clock=clock)

    everything = stored_bytes(backend_name, tmp_path)
    assert SECRET.encode() not in everything
    assert KEPT.encode() in everything  # the scan reads what is really stored


def test_a_consolidation_pass_that_read_the_evidence_before_the_erase_writes_nothing(
    stores: Stores, staging: StagingStore, clock: FixedClock
) -> None:
    fact, _ = remembered(stores, staging, clock)

    def erase_then_write_it_back(request: ModelRequest) -> str:
        assert SECRET in request.messages[0].text  # the pass read the evidence ...
        erase_record(stores, SCOPE, fact, staging=staging, clock=clock)  # ... then the erase
        return answer({"kind": "add", "content": f"Passport: {SECRET}", "evidence": [1]})

    consolidator = Consolidator(
        stores=stores,
        staging=staging,
        model=ScriptedModel([erase_then_write_it_back]),
        clock=clock,
        wait=lambda _: None,
    )
    outcome = consolidate_scope(SCOPE, consolidator)

    assert outcome.status == "conflict"
    assert all(SECRET not in v.content for v in stores.records.list_records(SCOPE).items)
    assert stores.rollouts is not None
    pending = stores.rollouts.list_pending(SCOPE, kind="evidence")
    assert all(SECRET.encode() not in staging.get(SCOPE, r.rollout_id) for r in pending)


def test_erasing_a_missing_record_changes_nothing(
    stores: Stores, staging: StagingStore, clock: FixedClock
) -> None:
    remembered(stores, staging, clock)
    erasures = stores.records.erasures(SCOPE)
    with pytest.raises(RecordNotFoundError):
        erase_record(stores, SCOPE, "mem-" + "0" * 36, staging=staging, clock=clock)
    assert stores.records.erasures(SCOPE) == erasures


def test_an_exact_restatement_elsewhere_is_erased_and_a_mere_mention_is_kept(
    stores: Stores, staging: StagingStore, clock: FixedClock
) -> None:
    fact, _ = remembered(stores, staging, clock)
    content = stores.records.get(SCOPE, fact).content
    again = create(stores, content.upper(), scope=SCOPE, namespace=f"/notes/{SCOPE.actor_id}/")
    mention = create(stores, f"Renew the passport ({KEPT})", scope=SCOPE)

    erased = erase_record(stores, SCOPE, fact, staging=staging, clock=clock)

    assert again.record_id in erased.record_ids  # the same digest: the same content
    assert stores.records.get(SCOPE, again.record_id).status is Status.ERASED
    assert stores.records.get(SCOPE, mention.record_id).status is Status.ACTIVE


class PassBeforeDelete:
    """The staging store, except that just before the erase deletes a payload, a consolidation
    pass reads it and commits what the hijacked model says: an apply that lands after the purge
    was decided and before the record's erasure moves the count."""

    def __init__(self, staging: StagingStore, run_pass: Callable[[StagingStore], object]) -> None:
        self._staging, self._run_pass = staging, run_pass

    def delete(self, scope: Scope, rollout_id: str) -> None:
        run_pass, self._run_pass = self._run_pass, lambda _: None
        run_pass(self._staging)
        self._staging.delete(scope, rollout_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._staging, name)


def test_a_record_a_pass_wrote_from_purged_evidence_meanwhile_is_erased(
    stores: Stores, staging: StagingStore, clock: FixedClock
) -> None:
    fact, _ = remembered(stores, staging, clock)
    committed: list[str] = []

    def run_pass(real: StagingStore) -> None:
        model = ScriptedModel(
            [answer({"kind": "add", "content": "Travels a lot", "evidence": [1]})]
        )
        consolidator = Consolidator(
            stores=stores, staging=real, model=model, clock=clock, wait=lambda _: None
        )
        committed.append(consolidate_scope(SCOPE, consolidator).status)

    racing = PassBeforeDelete(staging, run_pass)
    erase_record(stores, SCOPE, fact, staging=racing, clock=clock)  # type: ignore[arg-type]

    assert committed == ["committed"]
    live = [v.content for v in stores.records.list_records(SCOPE).items]
    assert "Travels a lot" not in live  # written from the secret's evidence: erased with it


class FailingSecondErase:
    """The record store, except that the second erase (the first restating record, after the
    record's own) fails once, as a killed process would leave it."""

    def __init__(self, records: Any) -> None:
        self._records, self._calls = records, 0

    def erase(self, scope: Scope, record_id: str) -> Any:
        self._calls += 1
        if self._calls == 2:
            raise OSError("killed")
        return self._records.erase(scope, record_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._records, name)


def test_an_erase_that_failed_after_the_records_own_is_finished_by_a_rerun(
    stores: Stores, staging: StagingStore, clock: FixedClock
) -> None:
    fact, holding = remembered(stores, staging, clock)
    failing = dataclasses.replace(stores, records=FailingSecondErase(stores.records))
    with pytest.raises(OSError, match="killed"):
        erase_record(failing, SCOPE, fact, staging=staging, clock=clock)
    assert any(SECRET in v.content for v in stores.records.list_records(SCOPE).items)

    again = erase_record(stores, SCOPE, fact, staging=staging, clock=clock)

    assert sorted(again.record_ids) == sorted(holding)
    assert all(SECRET not in v.content for v in stores.records.list_records(SCOPE).items)


def test_an_episode_citing_the_source_turn_is_erased_and_a_fact_beside_it_is_kept(
    stores: Stores, staging: StagingStore, clock: FixedClock
) -> None:
    fact, _ = remembered(stores, staging, clock)
    cited = stores.records.get(SCOPE, fact).sources
    episode = NewRecord(
        namespace=f"/episodes/{SCOPE.actor_id}/s1/",
        strategy="episodic",
        category="episode",
        content="The user shared travel documents and said thanks.",
        sources=cited,
    )
    beside = NewRecord(
        namespace=f"/facts/{SCOPE.actor_id}/",
        content="The user says thanks at the end.",
        sources=cited,
    )
    written = stores.records.apply(SCOPE, [Create(record=episode), Create(record=beside)])

    erased = erase_record(stores, SCOPE, fact, staging=staging, clock=clock)

    assert written[0].record_id in erased.restating
    assert written[1].record_id not in erased.record_ids  # its content is its own
    assert stores.records.get(SCOPE, written[1].record_id).status is Status.ACTIVE


def test_a_short_source_turn_is_deleted_by_id_and_matches_no_other_turn(
    stores: Stores, staging: StagingStore, clock: FixedClock
) -> None:
    said = stores.events.append(SCOPE, turn("Yes.", session_id="s3", clock=clock))
    longer = "Yes. I will call my sister later today."
    stores.events.append(SCOPE, turn(longer, session_id="s4", clock=clock))
    cited = Source(kind=SourceKind.USER, session_id="s3", event_id=said.event_id)
    confirmed = create(stores, f"Confirmed the booking {SECRET}", scope=SCOPE, sources=(cited,))

    erased = erase_record(stores, SCOPE, confirmed.record_id, staging=staging, clock=clock)

    assert erased.events == 1
    assert stores.events.list_events(SCOPE, "s3").items == ()
    texts = [e.payload[0].text for e in stores.events.list_events(SCOPE, "s4").items]
    assert texts == [longer]
