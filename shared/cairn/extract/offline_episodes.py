"""The offline heuristic answers to the episodic strategy's requests: extractive, no model.

- An episode (``EPISODE_SCHEMA``) is told from the segment's own sentences: the situation is
  what the user stated about themselves (``cairn.extract.statements``), else their first
  sentence; the intent the first thing they asked for or asked about; the actions the first
  sentence of each assistant or tool message, in order (up to four); the outcome the first
  sentence of the segment's last message. A segment without a user message tells nothing.
- A reflection (``REFLECTION_SCHEMA``) is one line across the episodes shown: the topics that
  recur in two or more of them (content words, stemmed to match, shown as first written) and
  the intents of the latest ones, citing every episode a recurring topic came from (or all
  of them when none recurs). It replaces the first kept reflection, so the heuristic keeps one
  reflection per namespace, each pass a new version of it.

It cannot judge whether a goal was reached, infer a lesson, or tell two goals apart within a
segment: a real model does (``cairn.llm.openai_compat`` with a local server, or Bedrock).
"""

from __future__ import annotations

import re
from typing import Any, Final

from cairn.answers.episodes import MAX_ACTIONS, episode_parts
from cairn.answers.extraction import MAX_EVIDENCE, MAX_FACT_CHARS, MAX_SUMMARY_CHARS
from cairn.extract.episodes import EPISODE_SCHEMA
from cairn.extract.offline_rules import spoken_text
from cairn.extract.prompts import ExtractionInput, shortened
from cairn.extract.reflections import REFLECTION_SCHEMA, ReflectionInput
from cairn.extract.statement_words import REQUEST
from cairn.extract.statements import statements_in
from cairn.llm.heuristic import Responder, read_document
from cairn.models import Role
from cairn.recall.keywords import STOPWORDS, tokenize

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[^\W\d_][\w'-]{3,}")
# Words every episode's own wording brings: never a topic.
_FRAME = frozenset(
    [
        "user",
        "users",
        "assistant",
        "asked",
        "replied",
        "said",
        "ended",
        "opened",
        "tool",
        "returned",
        "wanted",
        "segment",
        "about",
        "with",
        "from",
        "that",
        "this",
        "what",
        "which",
        "their",
        "there",
        "situation",
        "intent",
        "actions",
        "outcome",
    ]
)
_MAX_SHOWN_ACTIONS = min(4, MAX_ACTIONS)
_DOER = {Role.ASSISTANT: "The assistant replied", Role.TOOL: "A tool returned"}


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


def _line(text: str, limit: int = MAX_FACT_CHARS) -> str:
    return shortened(" ".join(text.split()), limit)


def _first(text: str) -> str:
    found = _sentences(text)
    return found[0] if found else text.strip()


def _situation(said: list[str]) -> str:
    stated = [s.content.rstrip(".") for text in said for s in statements_in(text)]
    if stated:
        return _line("; ".join(stated[:3]))
    return _line(f"The user opened with: {_first(said[0])}")


def _intent(said: list[str]) -> str:
    for text in said:
        for sentence in _sentences(text):
            bare = sentence.rstrip(".!?").strip()
            if asked := REQUEST.fullmatch(bare):
                return _line(f"The user asked to {asked[1].lower()} {asked[2]}")
            if sentence.endswith("?"):
                return _line(f"The user asked: {sentence}")
    return _line(f"The user said: {_first(said[-1])}")


def _episode(document: ExtractionInput) -> list[dict[str, Any]]:
    texts = [(m.alias, m.role, spoken_text(m.text)) for m in document.messages]
    said = [text for _, role, text in texts if role is Role.USER and text.strip()]
    if not said:
        return []
    actions = [
        _line(f"{_DOER[role]}: {_first(text)}")
        for _, role, text in texts
        if role in _DOER and text.strip()
    ][:_MAX_SHOWN_ACTIONS] or ["No reply from the assistant is in this segment"]
    _, last_role, last_text = texts[-1]
    speaker = "The user" if last_role is Role.USER else "The assistant"
    return [
        {
            "situation": _situation(said),
            "intent": _intent(said),
            "actions": actions,
            "outcome": _line(f"{speaker} ended with: {_first(last_text)}"),
            "evidence": [alias for alias, _, _ in texts][:MAX_EVIDENCE],
        }
    ]


def _topics(content: str) -> dict[str, str]:
    """The content words of an episode, by stem, each as first written."""
    found: dict[str, str] = {}
    for word in _WORD.findall(content):
        folded = word.casefold()
        if folded in STOPWORDS or folded in _FRAME:
            continue
        for stem in tokenize(folded)[:1]:
            found.setdefault(stem, folded)
    return found


def _told(content: str) -> str:
    """An episode's parts without their labels (the whole text if it has none)."""
    return " ".join(episode_parts(content).values()) or content


def _reflection(document: ReflectionInput) -> list[dict[str, Any]]:
    episodes = document.episodes
    topics = {e.alias: _topics(_told(e.content)) for e in episodes}
    counts: dict[str, list[int]] = {}
    for alias, found in topics.items():
        for stem in found:
            counts.setdefault(stem, []).append(alias)
    recurring = sorted(
        (stem for stem, aliases in counts.items() if len(aliases) >= 2),
        key=lambda stem: (-len(counts[stem]), stem),
    )[:8]
    intents = [episode_parts(e.content).get("Intent", e.content) for e in episodes[-3:]]
    if recurring:
        words = ", ".join(
            f"{next(topics[a][s] for a in counts[s])} ({len(counts[s])})" for s in recurring
        )
        cited = sorted({a for stem in recurring for a in counts[stem]})
        content = f"Across {len(episodes)} episodes the user returned to: {words}."
    else:
        cited = [e.alias for e in episodes]
        content = f"Across {len(episodes)} episodes no topic recurred."
    content += " Latest intents: " + "; ".join(i.rstrip(".") for i in intents) + "."
    answer: dict[str, Any] = {"content": _line(content, MAX_SUMMARY_CHARS), "evidence": cited}
    if document.reflections:
        answer["replaces"] = document.reflections[0].alias
    return [answer]


EPISODIC_RESPONDERS: Final = {
    EPISODE_SCHEMA: Responder(
        key="candidates", answer=lambda text: _episode(read_document(ExtractionInput, text))
    ),
    REFLECTION_SCHEMA: Responder(
        key="candidates", answer=lambda text: _reflection(read_document(ReflectionInput, text))
    ),
}
