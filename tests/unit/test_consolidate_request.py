"""The consolidation request: at most 60,000 bytes of JSON, excerpts shortened progressively,
every record and evidence alias kept, tag previews bounded (property tests)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from cairn.consolidate.consolidation_policy import DEFAULT_CONSOLIDATION_POLICY
from cairn.consolidate.evidence import EvidenceMessage, EvidencePayload
from cairn.consolidate.prompts import (
    MIN_EXCERPT_CHARS,
    build_input,
    consolidation_request,
    fit_input,
    input_bytes,
)
from cairn.models import RecordVersion, Role, Source, SourceKind, Trust, content_digest

LIMIT = DEFAULT_CONSOLIDATION_POLICY.max_request_bytes
WHEN = datetime(2026, 3, 1, tzinfo=UTC)
SOURCE = Source(kind=SourceKind.USER)
CHARS = st.sampled_from(["a", "é", "漢", "🙂", " ", '"', "\\"])


@st.composite
def texts(draw: st.DrawFn, max_size: int) -> str:
    size = draw(st.integers(min_value=1, max_value=max_size))
    return draw(CHARS) * size + "!"


@st.composite
def records(draw: st.DrawFn) -> list[RecordVersion]:
    count = draw(st.integers(min_value=0, max_value=32))
    found: list[RecordVersion] = []
    for n in range(count):
        content = draw(texts(15_999))
        tags = tuple(draw(st.lists(texts(120), max_size=12)))
        found.append(
            RecordVersion(
                memory_id="default",
                actor_id="tg:1",
                record_id=f"mem-{n:036d}",
                version=1,
                namespace="/facts/tg:1/",
                content=content,
                category=draw(st.sampled_from(["fact", "preference", "x" * 64])),
                tags=tags,
                sources=(SOURCE,),
                trust=Trust.TRUSTED,
                first_seen_at=WHEN,
                last_seen_at=WHEN,
                created_at=WHEN,
                content_digest=content_digest(content),
            )
        )
    return found


@st.composite
def evidence(draw: st.DrawFn) -> list[EvidencePayload]:
    runs = draw(st.integers(min_value=1, max_value=4))
    found: list[EvidencePayload] = []
    for n in range(runs):
        messages = tuple(
            EvidenceMessage(index=i, role=Role.USER, text=draw(texts(8191)), sha256="0" * 64)
            for i in range(draw(st.integers(min_value=0, max_value=32)))
        )
        found.append(
            EvidencePayload(
                rollout_id=f"ev-{n}",
                memory_id="default",
                actor_id="tg:1",
                session_id="s1",
                run_id=f"run-{n}",
                completed_at=WHEN + timedelta(minutes=n),
                messages=messages,
                final_answer=draw(st.one_of(st.none(), texts(8191))),
                transcript_messages=len(messages),
                transcript_sha256="0" * 64,
            )
        )
    return found


@settings(max_examples=40, deadline=None)
@given(shown=records(), runs=evidence())
def test_the_request_fits_60000_bytes_and_keeps_every_alias(
    shown: list[RecordVersion], runs: list[EvidencePayload]
) -> None:
    fitted = fit_input(build_input(shown, runs, DEFAULT_CONSOLIDATION_POLICY), LIMIT)

    request = consolidation_request(
        fitted, policy=DEFAULT_CONSOLIDATION_POLICY, timeout_seconds=60.0
    )
    sent = request.messages[0].text
    assert len(sent.encode("utf-8")) <= LIMIT
    document = json.loads(sent)
    assert [r["alias"] for r in document["records"]] == list(range(1, len(shown) + 1))
    assert [e["alias"] for e in document["evidence"]] == list(range(1, len(runs) + 1))
    assert [len(e["messages"]) for e in document["evidence"]] == [len(r.messages) for r in runs]
    for record in document["records"]:
        assert len(record["tags"]) <= DEFAULT_CONSOLIDATION_POLICY.max_tags_shown
        assert all(len(tag) <= DEFAULT_CONSOLIDATION_POLICY.max_tag_chars for tag in record["tags"])
        assert len(record["content"]) >= min(MIN_EXCERPT_CHARS, 2)


def test_excerpts_are_shortened_evidence_first_and_only_as_far_as_needed() -> None:
    runs = [
        EvidencePayload(
            rollout_id="ev-1",
            memory_id="default",
            actor_id="tg:1",
            session_id="s1",
            run_id="run-1",
            completed_at=WHEN,
            messages=tuple(
                EvidenceMessage(index=i, role=Role.USER, text="w" * 4000, sha256="0" * 64)
                for i in range(20)
            ),
            transcript_messages=20,
            transcript_sha256="0" * 64,
        )
    ]
    document = build_input([], runs, DEFAULT_CONSOLIDATION_POLICY)
    assert input_bytes(document) > LIMIT

    fitted = fit_input(document, LIMIT)

    lengths = {len(m.text) for m in fitted.evidence[0].messages}
    assert lengths == {2000}  # halved once: the first length that fits
    assert input_bytes(fitted) <= LIMIT
