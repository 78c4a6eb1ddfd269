"""The offline heuristic answer to a rollup request: an extractive summary, by rule.

``ROLLUP_RESPONDERS`` gives ``cairn.llm.heuristic.HeuristicModel`` a ``Responder`` for the
rollup schema (``cairn.history.prompts``). It does not restate the session's facts one by one
(extraction's job); it says what the span was about:

1. a topics line: the words that recur across the most passages of the span (stemmed, stop
   words dropped, shown as first written), counted over the user's turns when the span has
   any (an assistant's acknowledgements repeat themselves, not the topic);
2. the few sentences that carry most of those recurring words, the user's first (one a
   passage, none twice, so the whole span is heard and not just its loudest part), in the
   order they were said, each with its speaker and cut at 200 characters. Above level 1 the
   children's topics lines are read past, and their speaker labels kept.

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
# A level-1 summary's own framing, dropped when a level above reads it back.
_SPEAKER = re.compile(
    r"^(?:user|assistant|tool|other)(?:/(?:user|assistant|tool|other))*:\s*", re.I
)
_TOPICS_LINE = re.compile(r"^Topics:[^.]*\.\s*")
_WORD = re.compile(r"[^\W_]+")
MAX_SENTENCE_CHARS = 200
TOPICS = 4
SENTENCES_AT_LEVEL_ONE = 3
SENTENCES_ABOVE = 4


@dataclass(frozen=True, slots=True)
class _Sentence:
    order: int
    passage: int
    speaker: str
    text: str
    stems: frozenset[str]


def summarise(document: RollupDocument) -> list[str]:
    """The summary's points for ``document``: a topics line, then the chosen sentences."""
    sentences = _sentences(document)
    heard = [s for s in sentences if "user" in s.speaker] or sentences
    by_passage: dict[int, set[str]] = {}
    for sentence in heard:
        by_passage.setdefault(sentence.passage, set()).update(sentence.stems)
    spread = Counter(stem for stems in by_passage.values() for stem in stems)
    recurring = {stem: count for stem, count in spread.items() if count >= 2}
    points: list[str] = []
    if recurring:
        top = sorted(recurring, key=lambda stem: (-recurring[stem], _first_seen(stem, sentences)))
        points.append("Topics: " + ", ".join(_surface(s, document) for s in top[:TOPICS]) + ".")
    wanted = SENTENCES_AT_LEVEL_ONE if document.level == 1 else SENTENCES_ABOVE
    scored = [(sum(recurring.get(stem, 0) for stem in s.stems), s) for s in sentences]
    chosen: list[_Sentence] = []
    said: set[str] = set()
    passages: set[int] = set()
    ranked = sorted(scored, key=lambda x: ("user" not in x[1].speaker, -x[0], x[1].order))
    for score, sentence in ranked:
        key = sentence.text.casefold()
        if not score or key in said or sentence.passage in passages:
            continue  # one sentence a passage, none twice: the span, not its loudest part
        chosen.append(sentence)
        said.add(key)
        passages.add(sentence.passage)
        if len(chosen) == wanted:
            break
    if not chosen and sentences:
        chosen = [sentences[0], sentences[-1]] if len(sentences) > 1 else sentences[:1]
    for sentence in sorted(chosen, key=lambda s: s.order):
        points.append(f"{sentence.speaker}: {_cut(sentence.text)}")
    return points or ["(nothing to summarise)"]


def _sentences(document: RollupDocument) -> list[_Sentence]:
    found: list[_Sentence] = []
    for passage in document.passages:
        for piece in _SENTENCE_END.split(_TOPICS_LINE.sub("", passage.text)):
            label = _SPEAKER.match(piece.strip())
            speaker = label.group(0).rstrip(": \t").lower() if label else passage.speaker
            text = _SPEAKER.sub("", piece.strip())
            if not text:
                continue
            stems = frozenset(tokenize(text))
            found.append(_Sentence(len(found), passage.n, speaker, text, stems))
    return found


def _plain(text: str) -> str:
    """The passage without a summary's topics line and speaker labels."""
    pieces = _SENTENCE_END.split(_TOPICS_LINE.sub("", text))
    return " ".join(_SPEAKER.sub("", piece.strip()) for piece in pieces)


def _first_seen(stem: str, sentences: list[_Sentence]) -> int:
    return next((s.order for s in sentences if stem in s.stems), len(sentences))


def _surface(stem: str, document: RollupDocument) -> str:
    """The word as first written whose stem is ``stem`` (lower-cased unless a name)."""
    for passage in document.passages:
        for word in _WORD.findall(_plain(passage.text)):
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
