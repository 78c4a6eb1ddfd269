"""The offline extractor reads what users state about themselves, as the SDK's own reference
conversations state it, and files nothing from questions, hedges, reactions or passing states."""

from __future__ import annotations

import json

import pytest

from benchmarks.extraction_eval import BEGIN, DOC, END, evaluate, render
from cairn.answers.extraction import ExtractionAnswer, SummaryAnswer
from cairn.extract.extraction_policy import DEFAULT_EXTRACTION_POLICY
from cairn.extract.offline_rules import spoken_text
from cairn.extract.prompts import (
    EXTRACTION_SCHEMA,
    ExtractionInput,
    PromptMessage,
    extraction_request,
)
from cairn.extract.statements import stated_attribute, statements_in
from cairn.local import offline_model
from cairn.memories import StrategyKind
from cairn.model_request import OutputSchema
from cairn.models import Role


@pytest.mark.parametrize(
    ("said", "filed"),
    [
        (
            "I work on distributed systems at a startup in Seattle",
            ("fact", "The user works on distributed systems at a startup in Seattle."),
        ),
        ("Remember this: my dog Pixel is a corgi.", ("fact", "The user's dog Pixel is a corgi.")),
        ("I like sushi with tuna", ("preference", "The user likes sushi with tuna.")),
        (
            "I am a pilot based in Denver and fly Cessnas.",
            ("fact", "The user is a pilot based in Denver and flies Cessnas."),
        ),
        ("I'm moving to Berlin in May.", ("plan", "The user is moving to Berlin in May.")),
        ("I no longer work at Acme.", ("fact", "The user no longer works at Acme.")),
        ("I can't stand horror movies.", ("preference", "The user cannot stand horror movies.")),
        ("Actually, I live in Portland now.", ("fact", "The user lives in Portland now.")),
    ],
)
def test_a_first_person_statement_is_filed_in_the_third_person(
    said: str, filed: tuple[str, str]
) -> None:
    assert [(s.category, s.content) for s in statements_in(said)] == [filed]


@pytest.mark.parametrize(
    "said",
    [
        "What is my name?",
        "I think I might like tea.",
        "I'm tired.",
        "I love that!",
        "I have a question about my invoice.",
        "I don't know.",
        "Book a Kyoto ryokan for two nights.",
    ],
)
def test_questions_hedges_reactions_and_passing_states_file_nothing(said: str) -> None:
    assert statements_in(said) == []


def test_a_request_is_kept_only_when_asked_for() -> None:
    asked = statements_in("Book a Kyoto ryokan for two nights.", requests=True)

    assert [(s.category, s.content) for s in asked] == [
        ("request", "The user asked to book a Kyoto ryokan for two nights.")
    ]


def test_a_negation_or_correction_sets_the_same_attribute_as_what_it_replaces() -> None:
    assert stated_attribute("The user works at Acme.") == stated_attribute(
        "The user no longer works at Acme."
    )
    assert stated_attribute("The user likes tea.") == stated_attribute(
        "The user does not like tea."
    )
    assert stated_attribute("The user lives in Seattle.") == stated_attribute(
        "The user lives in Portland now."
    )
    assert stated_attribute("The user likes tea.") != stated_attribute("The user likes jazz.")


def test_a_strands_session_message_is_read_for_its_words() -> None:
    stored = json.dumps(
        {"message": {"role": "user", "content": [{"text": "I like sushi with tuna"}]}, "x": 1}
    )

    assert spoken_text(stored) == "I like sushi with tuna"
    assert spoken_text('{"not": "a session message"}') == '{"not": "a session message"}'
    assert spoken_text("plain words") == "plain words"


def _candidates(kind: StrategyKind, *said: str) -> list[tuple[str, str]]:
    messages = tuple(
        PromptMessage(alias=i + 1, role=Role.USER if i % 2 == 0 else Role.ASSISTANT, text=t)
        for i, t in enumerate(said)
    )
    answer_type = SummaryAnswer if kind is StrategyKind.SUMMARY else ExtractionAnswer
    request = extraction_request(
        ExtractionInput(strategy=kind, messages=messages),
        output=OutputSchema.of(answer_type, EXTRACTION_SCHEMA),
        appended=None,
        policy=DEFAULT_EXTRACTION_POLICY,
    )
    answer = answer_type.model_validate_json(offline_model().complete(request).text)
    return [(c.category, c.content) for c in answer.candidates]


def test_the_sdk_reference_conversation_yields_facts_preferences_and_a_summary() -> None:
    said = (
        "I prefer dark mode, Python over Java, and vim over emacs",
        "Noted! Those are solid developer preferences.",
        "I work on distributed systems at a startup in Seattle",
        "Interesting! Distributed systems is a great field.",
    )

    assert _candidates(StrategyKind.SEMANTIC, *said) == [
        ("fact", "The user works on distributed systems at a startup in Seattle.")
    ]
    assert _candidates(StrategyKind.USER_PREFERENCE, *said) == [
        ("preference", "The user prefers dark mode, Python over Java, and vim over emacs.")
    ]
    ((category, summary),) = _candidates(StrategyKind.SUMMARY, *said)
    assert category == "summary"
    assert "dark mode" in summary
    assert "distributed systems" in summary


def test_the_labelled_set_scores_as_docs_extraction_md_reports() -> None:
    scores = evaluate()
    text = DOC.read_text(encoding="utf-8")

    assert scores["all"].precision >= 0.9
    assert scores["all"].recall >= 0.85
    assert scores["none"].filed == 0  # no question, hedge or reaction files anything
    assert text.split(BEGIN, 1)[1].split(END, 1)[0] == render(scores), (
        "docs/extraction.md is stale: run python -m benchmarks.extraction_eval --write"
    )
