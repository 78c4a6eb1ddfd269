"""Keyword scoring: the tokenizer, BM25 and Jaccard behave as the textbook says."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn.recall.keywords import bm25_scores, jaccard, tokenize


def test_tokens_are_casefolded_without_punctuation_or_stopwords() -> None:
    assert tokenize("What does the USER's dog, Rex, eat?!") == ["user", "dog", "rex", "eat"]


@pytest.mark.parametrize(
    "forms",
    [
        ("like", "likes", "liked", "liking"),
        ("run", "runs", "running"),
        ("study", "studies", "studied"),
        ("group", "groups", "grouping"),
        ("Tea", "teas", "TEA"),
    ],
)
def test_inflections_of_a_word_share_one_token(forms: tuple[str, ...]) -> None:
    assert len({tuple(tokenize(form)) for form in forms}) == 1


def test_numbers_and_non_latin_words_are_kept() -> None:
    assert tokenize("Born 1990 in Zürich, 東京 next") == ["born", "1990", "zürich", "東京", "next"]


def test_bm25_matches_a_hand_computed_score() -> None:
    docs = [["green", "tea"], ["black", "coffee", "tea"], ["bicycle"]]
    k1, b = 1.2, 0.75
    average = 2.0
    idf_green = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    idf_tea = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    norm = k1 * (1 - b + b * 2 / average)
    expected = (idf_green + idf_tea) * (k1 + 1) / (1 + norm)
    scores = bm25_scores(["green", "tea"], docs, k1=k1, b=b)
    assert scores[0] == pytest.approx(expected)
    assert scores[2] == 0.0


def test_a_rare_term_outweighs_a_common_one() -> None:
    docs = [["tea", "x"], ["tea", "y"], ["tea", "z"], ["kyoto", "w"]]
    tea, _, _, kyoto = bm25_scores(["tea", "kyoto"], docs, k1=1.2, b=0.75)
    assert kyoto > tea > 0.0


def test_a_match_in_a_shorter_row_counts_for_more() -> None:
    docs = [["tea"], ["tea", "and", "many", "other", "words", "here"]]
    short, long = bm25_scores(["tea"], docs, k1=1.2, b=0.75)
    assert short > long


vocabulary = st.sampled_from(["tea", "coffee", "cat", "paris", "piano", "chess", "rain"])


@given(
    query=st.lists(vocabulary, max_size=4),
    docs=st.lists(st.lists(vocabulary, max_size=6), max_size=8),
    k1=st.floats(0.0, 3.0),
    b=st.floats(0.0, 1.0),
)
def test_bm25_is_positive_exactly_when_a_term_is_shared(
    query: list[str], docs: list[list[str]], k1: float, b: float
) -> None:
    scores = bm25_scores(query, docs, k1=k1, b=b)
    assert len(scores) == len(docs)
    for doc, score in zip(docs, scores, strict=True):
        assert score >= 0.0
        assert (score > 0.0) == bool(set(query) & set(doc))


@given(st.lists(vocabulary, max_size=6), st.lists(vocabulary, max_size=6))
def test_jaccard_is_symmetric_and_in_the_unit_interval(left: list[str], right: list[str]) -> None:
    assert 0.0 <= jaccard(left, right) == jaccard(right, left) <= 1.0
    assert jaccard(left, left) == 1.0
