"""The offline heuristic answer to a rollup request: an extractive summary, by rule.

``ROLLUP_RESPONDERS`` gives ``cairn.llm.heuristic.HeuristicModel`` a ``Responder`` for the
rollup schema (``cairn.history.prompts``). It does not restate the session's facts one by one
(extraction's job); it says what the span was about:

1. a topics line: the words that recur across the most passages of the span (stemmed, stop
   words dropped, shown as first written);
2. the few sentences that carry most of those recurring words, in the order they were said,
   each with its speaker (level 1) and cut at 200 characters.

A span whose passages share no word is summarised by its first and last sentences. What it
cannot do: paraphrase, resolve "she" or "it", see what a turn implies, or weigh a joke against
a decision. A real model (``cairn.llm.bedrock``, ``cairn.llm.openai_compat``) writes better ones.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from cairn.history.prompts import ROLLUP_SCHEMA_NAME, RollupDocument
from cairn.llm.heuristic import Responder, read_document
from cairn.recall.keywords import tokenize

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[^\W_]+")
MAX_SENTENCE_CHARS = 200
TOPICS = 4
SENTENCES_AT_LEVEL_ONE = 3
SENTENCES_ABOVE = 4


@dataclass(frozen=True, slots=True)
class _Sentence:
    order: int
    speaker: str
    text: str
    stems: frozenset[str]


def summarise(document: RollupDocument) -> list[str]:
    """The summary's points for ``document``: a topics line, then the chosen sentences."""
    sentences = _sentences(document)
    spread = Counter(stem for p in document.passages for stem in set(tokenize(p.text)))
    recurring = {stem: count for stem, count in spread.items() if count >= 2}
    points: list[str] = []
    if recurring:
        top = sorted(recurring, key=lambda stem: (-recurring[stem], _first_seen(stem, sentences)))
        points.append("Topics: " + ", ".join(_surface(s, document) for s in top[:TOPICS]) + ".")
    wanted = SENTENCES_AT_LEVEL_ONE if document.level == 1 else SENTENCES_ABOVE
    scored = [(sum(recurring.get(stem, 0) for stem in s.stems), s) for s in sentences]
    chosen = [s for score, s in sorted(scored, key=lambda x: (-x[0], x[1].order)) if score][:wanted]
    if not chosen and sentences:
        chosen = [sentences[0], sentences[-1]] if len(sentences) > 1 else sentences[:1]
    for sentence in sorted(chosen, key=lambda s: s.order):
        said = _cut(sentence.text)
        points.append(f"{sentence.speaker}: {said}" if document.level == 1 else said)
    return points or ["(nothing to summarise)"]


def _sentences(document: RollupDocument) -> list[_Sentence]:
    found: list[_Sentence] = []
    for passage in document.passages:
        for piece in _SENTENCE_END.split(passage.text):
            text = piece.strip()
            if not text or text.startswith("Topics:"):
                continue
            stems = frozenset(tokenize(text))
            found.append(_Sentence(len(found), passage.speaker, text, stems))
    return found


def _first_seen(stem: str, sentences: list[_Sentence]) -> int:
    return next((s.order for s in sentences if stem in s.stems), len(sentences))


def _surface(stem: str, document: RollupDocument) -> str:
    """The word as first written whose stem is ``stem`` (lower-cased unless a name)."""
    for passage in document.passages:
        for word in _WORD.findall(passage.text):
            if tokenize(word) == [stem]:
                shown: str = word if word[:1].isupper() and not word.isupper() else word.lower()
                return shown
    return stem


def _cut(text: str) -> str:
    if len(text) <= MAX_SENTENCE_CHARS:
        return text
    cut = text[: MAX_SENTENCE_CHARS - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > MAX_SENTENCE_CHARS // 2 else cut) + "…"


def _answer(text: str) -> list[dict[str, Any]]:
    return [{"text": point} for point in summarise(read_document(RollupDocument, text))]


ROLLUP_RESPONDERS: dict[str, Responder] = {
    ROLLUP_SCHEMA_NAME: Responder(key="points", answer=_answer),
}
