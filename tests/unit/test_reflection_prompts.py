"""What the reflection job asks, how it reads the answers, and the offline answers: an
extractive insight only over a shared term, a contradiction only where one attribute is set to
two values (``cairn.history.reflection_prompts``, ``cairn.history.contradiction_prompts``,
``cairn.extract.offline_contradictions``)."""

from __future__ import annotations

import json

import pytest

from cairn.errors import InvalidModelOutputError
from cairn.history.contradiction_prompts import contradiction_request, read_contradictions
from cairn.history.link_prompts import LinkPair, end_of
from cairn.history.reflection_prompts import read_reflection, reflection_request
from cairn.local import offline_model


def offline_reflection(*members: tuple[str, tuple[str, ...]]) -> tuple[str, tuple[int, ...]] | None:
    answer = offline_model().complete(reflection_request(members)).text
    return read_reflection(answer, len(members))


def offline_flags(*pairs: tuple[str, str]) -> list[int]:
    document = tuple(
        LinkPair(n=n, a=end_of(a, ()), b=end_of(b, ()), cosine=0.8)
        for n, (a, b) in enumerate(pairs, 1)
    )
    flagged, dropped = read_contradictions(
        offline_model().complete(contradiction_request(document)).text, len(pairs)
    )
    assert dropped == 0
    return flagged


def test_the_offline_reflection_cites_the_records_sharing_a_term_in_their_own_words() -> None:
    found = offline_reflection(
        ("Anna flew to Oslo in May.", ("Anna", "Oslo")),
        ("The user's car is blue.", ("car",)),
        ("Anna booked the Oslo hotel.", ("anna", "hotel")),
    )

    assert found == (
        "2 memories concern Anna: Anna flew to Oslo in May; Anna booked the Oslo hotel.",
        (1, 3),
    )


def test_the_offline_reflection_answers_nothing_without_a_shared_term() -> None:
    assert offline_reflection(("Tea at five", ()), ("Bikes in the shed", ())) is None


def test_a_reflection_answer_must_cite_two_of_the_records_shown() -> None:
    cites_one = json.dumps({"reflections": [{"insight": "x", "cites": [1, 7]}]})
    too_many = json.dumps({"reflections": [{"insight": "a", "cites": [1, 2]}] * 2})

    assert read_reflection(json.dumps({"reflections": []}), 3) is None
    assert read_reflection(
        json.dumps({"reflections": [{"insight": " y ", "cites": [2, 1, 2]}]}), 2
    ) == (
        "y",
        (2, 1),
    )
    with pytest.raises(InvalidModelOutputError):
        read_reflection(cites_one, 3)
    with pytest.raises(InvalidModelOutputError):
        read_reflection(too_many, 3)
    with pytest.raises(InvalidModelOutputError):
        read_reflection("no JSON here", 3)


def test_the_offline_model_flags_one_attribute_set_to_two_values_and_nothing_else() -> None:
    flagged = offline_flags(
        ("The user's office is in Lisbon.", "The user's office is in Porto."),
        ("The user likes tea.", "The user does not like tea."),
        ("The user likes tea.", "The user likes coffee."),  # two tastes, both can hold
        ("The user's office is in Lisbon.", "the user's office is in  Lisbon."),  # a repeat
        ("Anna flew to Oslo.", "Anna flew to Bergen."),  # not a statement extraction writes
    )

    assert flagged == [1, 2]


def test_a_contradiction_answer_keeps_pairs_asked_once_each() -> None:
    answer = json.dumps({"contradictions": [{"pair": 2}, {"pair": 9}, {"pair": 2}]})

    assert read_contradictions(answer, 3) == ([2], 2)
    with pytest.raises(InvalidModelOutputError):
        read_contradictions(json.dumps({"contradictions": [{"pair": 0}]}), 3)
