"""The boot window: within budget, complete, resolution falling with age, fixed for a run, used
by the Converse loop, and topical recall leaves out what it shows verbatim."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cairn.changes import Create, NewRecord, Vector
from cairn.chunks import Chunk
from cairn.clock import FixedClock
from cairn.history import roll_up_session
from cairn.history.boot_window import HEADING, BootWindow, plan_window
from cairn.history.pyramid import FANOUT, level_one_chunk, parent_chunk
from cairn.history.turns import Turn
from cairn.models import Role, Scope, Source, SourceKind, Trust
from cairn.ports import Stores
from cairn.runtime import MemorySession, SessionOptions
from cairn.runtime.converse import ConverseAgent, allow_all
from cairn.testing import HashingEmbedder, InMemoryBackend, ScriptedModel
from cairn.testing.scripted_converse import ScriptedConverse, say, system_text

SCOPE = Scope(memory_id="m1", actor_id="tg:1")
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
EMBEDDER = HashingEmbedder()


def turn(seq: int) -> Turn:
    role = Role.USER if seq % 2 else Role.ASSISTANT
    words = f"turn {seq}: we talked about the hive on the north side, frame {seq}"
    return Turn(seq, f"e{seq}", "s1", T0 + timedelta(minutes=seq), ((role, words),))


def pyramid(count: int) -> tuple[list[Chunk], list[Turn], dict[str, Turn]]:
    """The chunks a rollup of ``count`` turns makes, the tail it leaves, the covered turns."""
    turns = [turn(seq) for seq in range(1, count + 1)]
    whole = count - count % FANOUT
    level = [
        level_one_chunk(SCOPE, turns[i : i + FANOUT], f"span {i + 1} summary of hives", T0)
        for i in range(0, whole, FANOUT)
    ]
    chunks = list(level)
    while len(level) >= FANOUT:
        level = [
            parent_chunk(level[i : i + FANOUT], f"L{level[0].level + 1} of hives", T0)
            for i in range(0, len(level) - len(level) % FANOUT, FANOUT)
        ]
        chunks += level
    return chunks, turns[whole:], {t.event_id: t for t in turns[:whole]}


def check_invariants(window: BootWindow, last_turn: int) -> None:
    assert window.tokens <= window.budget_tokens
    seq = window.omitted_turns + 1
    for item in window.items:
        assert item.from_seq == seq, "the window covers the history without gap or overlap"
        seq = item.to_seq + 1
    assert seq == last_turn + 1
    levels = [item.level for item in window.items]
    assert levels == sorted(levels, reverse=True), "resolution only falls with age"


@pytest.mark.parametrize("budget", [256, 400, 700, 1200, 2500, 5000, 20_000])
def test_the_window_fits_its_budget_and_covers_the_history_coarser_with_age(budget: int) -> None:
    chunks, tail, covered = pyramid(235)

    window = plan_window(chunks, tail, covered, budget)

    check_invariants(window, 235)
    assert window.items[-1].level == 0, "the newest turn is always verbatim when it fits"


def test_a_large_budget_shows_every_turn_verbatim() -> None:
    chunks, tail, covered = pyramid(120)

    window = plan_window(chunks, tail, covered, 200_000)

    assert [item.from_seq for item in window.items] == list(range(1, 121))
    assert {item.level for item in window.items} == {0}


def test_a_mid_budget_shows_all_three_resolutions() -> None:
    chunks, tail, covered = pyramid(235)

    window = plan_window(chunks, tail, covered, 700)

    assert {item.level for item in window.items} == {0, 1, 2}
    assert window.omitted_turns == 0


def test_a_budget_too_small_for_the_coarsest_view_says_what_it_left_out() -> None:
    chunks, tail, covered = pyramid(235)

    window = plan_window(chunks, tail, covered, 256)

    check_invariants(window, 235)
    assert window.omitted_turns > 0
    assert f"turns 1-{window.omitted_turns} are beyond this window" in window.block


def test_untrusted_turns_and_summaries_are_quoted_and_labelled() -> None:
    chunks, tail, covered = pyramid(25)

    window = plan_window(chunks, tail, covered, 400)

    summaries = [item for item in window.items if item.level]
    assert summaries
    assert all(item.trust is Trust.UNTRUSTED for item in summaries)
    lines = window.block.splitlines()
    assert lines[0] == HEADING
    assert any('| untrusted | "span' in line for line in lines)
    assistant = next(item for item in window.items if item.level == 0 and item.from_seq % 2 == 0)
    assert f'"{assistant.text}' in assistant.line


def echo_summary(request: object) -> str:
    return json.dumps({"points": [{"text": "they talked about hives"}]})


def session_with_history(stores: Stores, turns: int, **options: object) -> MemorySession:
    session = MemorySession.local(
        stores,
        memory_id=SCOPE.memory_id,
        actor_id=SCOPE.actor_id,
        session_id="s1",
        embedder=EMBEDDER,
        clock=FixedClock(T0),
        options=SessionOptions.model_validate({"history_budget_tokens": 600, **options}),
    )
    for i in range(turns):
        session.add_turn(Role.USER if i % 2 == 0 else Role.ASSISTANT, f"turn {i} about the hive")
    session.flush()
    assert stores.chunks is not None
    model = ScriptedModel([echo_summary] * (turns // FANOUT + turns // FANOUT**2))
    roll_up_session(stores.events, stores.chunks, model, SCOPE, "s1", clock=FixedClock(T0))
    return session


def test_a_run_fixes_its_boot_window_while_the_session_goes_on() -> None:
    stores = InMemoryBackend(FixedClock(T0)).stores()
    session = session_with_history(stores, 30)

    run = session.start_run("where is the hive?")
    before = run.system_prompt("Be useful.")
    run.add_turn(Role.USER, "a new turn during the run")
    session.flush()

    assert HEADING in before
    assert run.system_prompt("Be useful.") == before
    assert "a new turn during the run" in session.start_run("again").history_block


def test_the_converse_loop_puts_the_boot_window_in_the_system_prompt() -> None:
    stores = InMemoryBackend(FixedClock(T0)).stores()
    session = session_with_history(stores, 30, history_budget_tokens=300)
    model = ScriptedConverse([say("It is by the fence.")])
    agent = ConverseAgent(
        model, model_id="scripted", session=session, system_prompt="Be useful.", gate=allow_all
    )

    agent.answer("where is the hive?")

    shown = system_text(model.requests[0])
    assert HEADING in shown
    assert "they talked about hives" in shown


def test_a_session_without_a_budget_shows_no_history() -> None:
    stores = InMemoryBackend(FixedClock(T0)).stores()
    session = session_with_history(stores, 10, history_budget_tokens=None)

    assert session.start_run("hive").history_block == ""


def test_topical_recall_skips_a_memory_the_window_shows_verbatim() -> None:
    stores = InMemoryBackend(FixedClock(T0)).stores()
    session = session_with_history(
        stores, 4, per_turn_recall=True, turn_min_evidence=0.0, boot_top_k=1
    )
    shown_event = stores.events.list_events(SCOPE, "s1").items[-1].event_id

    def remember(text: str, event_id: str) -> str:
        (row,) = EMBEDDER.embed([text])
        record = NewRecord(
            namespace="/facts/tg:1/",
            content=text,
            sources=(Source(kind=SourceKind.USER, event_id=event_id, session_id="s1"),),
            vector=Vector(embedder=EMBEDDER.identity, values=tuple(float(x) for x in row)),
        )
        (written,) = stores.records.apply(SCOPE, [Create(record=record)])
        return written.record_id

    in_window = remember("The hive stands by the north fence.", shown_event)
    elsewhere = remember("The hive was painted blue in 2024.", "e-from-another-session")
    run = session.start_run("hello")  # nothing about hives: the boot block recalls neither

    injected = run.turn_context("tell me about the hive fence and its paint")

    assert injected is not None
    assert elsewhere in injected
    assert in_window not in injected


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    turns=st.integers(min_value=0, max_value=260), budget=st.integers(min_value=80, max_value=9000)
)
def test_any_pyramid_and_budget_give_a_complete_window_within_budget(
    turns: int, budget: int
) -> None:
    chunks, tail, covered = pyramid(turns)

    window = plan_window(chunks, tail, covered, budget)

    if window.items:
        check_invariants(window, turns)
    else:
        assert window.omitted_turns in (0, turns)
    frame_only = plan_window([], [], {}, budget)
    assert window.tokens <= max(budget, frame_only.tokens)
