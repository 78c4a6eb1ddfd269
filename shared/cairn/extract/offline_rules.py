"""The offline heuristic answers to extraction and formation requests: rules, no model.

``EXTRACTION_RESPONDERS`` gives ``cairn.llm.heuristic.HeuristicModel`` a ``Responder`` for each
of extraction's schemas (``cairn.extract.prompts``), with valid structured output built by
rules (``cairn.extract.statements``):

- extraction keeps what the user stated outright about themselves in a USER message (facts,
  relationships, places, dates, preferences, plans, decisions, negations and corrections:
  ``cairn.extract.statements``), each rewritten in the third person and citing the message it
  came from (a preference strategy keeps the preferences, a semantic strategy the rest); a
  Strands SessionMessage is read for its text. A summary is the list of those
  statements and of what the user asked for ("Stated in this session: …"), grown from the
  summary so far.
- formation calls a candidate the ``same`` as a related memory with the same canonical
  content, a ``supersede`` of one that sets the same attribute ("The user's office is …") to
  something else, and a ``create`` otherwise. It never merges: it cannot write merged text.

What it cannot do, by design: infer anything (a hobby from a photo, a job from a question),
read implicit facts ("ugh, Mondays" is not a preference), resolve coreference across sentences
("my sister … she lives in Oslo" files nothing about the sister's home), read the assistant's
or tools' messages, or follow a custom strategy's appended prompt. Use a real model
(``cairn.llm.openai_compat`` with a local Ollama server, or ``cairn.llm.bedrock``) for those.
"""

from __future__ import annotations

import json
from typing import Any, Final

from cairn.answers.extraction import MAX_CANDIDATES, MAX_SUMMARY_CHARS
from cairn.extract.prompts import (
    EXTRACTION_SCHEMA,
    FORMATION_SCHEMA,
    ExtractionInput,
    FormationInput,
)
from cairn.extract.statements import Statement, stated_attribute, statements_in
from cairn.llm.heuristic import Responder, read_document
from cairn.memories import StrategyKind
from cairn.models import Role, content_digest

# The rules state nothing they did not read; the extractor's cap lowers this for storage.
STATED_CONFIDENCE = 0.9
SUMMARY_PREFIX = "Stated in this session: "

# Each statement is filed once: a preference under a preference strategy, never again as a
# semantic fact.
_KEPT = {
    StrategyKind.SEMANTIC: frozenset({"fact", "decision", "plan"}),
    StrategyKind.USER_PREFERENCE: frozenset({"preference"}),
    StrategyKind.CUSTOM: frozenset({"fact", "decision", "plan", "preference"}),
}


def _extract_text(text: str) -> list[dict[str, Any]]:
    return _extract(read_document(ExtractionInput, text))


def _form_text(text: str) -> list[dict[str, Any]]:
    return _form(read_document(FormationInput, text))


EXTRACTION_RESPONDERS: Final = {
    EXTRACTION_SCHEMA: Responder(key="candidates", answer=_extract_text),
    FORMATION_SCHEMA: Responder(key="decisions", answer=_form_text),
}


def spoken_text(text: str) -> str:
    """What the user said: Strands' session manager stores each message as a JSON-serialised
    SessionMessage (``{"message": {"role": …, "content": [{"text": …}]}, …}``), whose text
    blocks are the words; any other text is itself."""
    if not text.startswith("{"):
        return text
    try:
        document = json.loads(text)
    except ValueError:
        return text
    message = document.get("message") if isinstance(document, dict) else None
    blocks = message.get("content") if isinstance(message, dict) else None
    if not isinstance(blocks, list):
        return text
    said = [b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return "\n".join(said)


def _stated(document: ExtractionInput) -> list[tuple[int, Statement]]:
    # A summary also keeps what the user asked for ("Book a ryokan …"); a record does not.
    requests = document.strategy is StrategyKind.SUMMARY
    return [
        (message.alias, statement)
        for message in document.messages
        if message.role is Role.USER
        for statement in statements_in(spoken_text(message.text), requests=requests)
    ]


def _extract(document: ExtractionInput) -> list[dict[str, Any]]:
    if document.strategy is StrategyKind.SUMMARY:
        return _summarise(document)
    kept = _KEPT[document.strategy]
    found: dict[str, dict[str, Any]] = {}
    for alias, statement in _stated(document):
        if statement.category not in kept:
            continue
        entry = found.setdefault(
            content_digest(statement.content),
            {
                "content": statement.content,
                "category": statement.category,
                "confidence": STATED_CONFIDENCE,
                "evidence": [],
            },
        )
        if alias not in entry["evidence"]:
            entry["evidence"].append(alias)
    return list(found.values())[:MAX_CANDIDATES]


def _summarise(document: ExtractionInput) -> list[dict[str, Any]]:
    stated = _stated(document)
    if not stated:
        return []
    earlier = document.summary_so_far or ""
    items = (
        earlier.removeprefix(SUMMARY_PREFIX).split("; ")
        if earlier.startswith(SUMMARY_PREFIX)
        else []
    )
    items = [item.rstrip(".") for item in items if item]
    for _, statement in stated:
        if statement.content.rstrip(".") not in items:
            items.append(statement.content.rstrip("."))
    content = SUMMARY_PREFIX + "; ".join(items) + "."
    while len(content) > MAX_SUMMARY_CHARS and len(items) > 1:
        items.pop(0)  # the oldest statements give way to the newest
        content = SUMMARY_PREFIX + "; ".join(items) + "."
    evidence = list(dict.fromkeys(alias for alias, _ in stated))
    return [
        {
            "content": content[:MAX_SUMMARY_CHARS],
            "category": "summary",
            "confidence": STATED_CONFIDENCE,
            "evidence": evidence,
        }
    ]


def _form(document: FormationInput) -> list[dict[str, Any]]:
    existing = {memory.alias: memory for memory in document.existing}
    decisions: list[dict[str, Any]] = []
    for case in document.candidates:
        digest = content_digest(case.content)
        attribute = stated_attribute(case.content)
        related = [existing[alias] for alias in case.related if alias in existing]
        same = next((m for m in related if content_digest(m.content) == digest), None)
        replaced = next(
            (m for m in related if attribute and stated_attribute(m.content) == attribute), None
        )
        if same is not None:
            decisions.append({"candidate": case.candidate, "action": "same", "target": same.alias})
        elif replaced is not None:
            decisions.append(
                {"candidate": case.candidate, "action": "supersede", "target": replaced.alias}
            )
        else:
            decisions.append({"candidate": case.candidate, "action": "create"})
    return decisions
