"""Explicit first-person statements, recognised by rules: no model, no inference.

``statements_in`` reads one user message sentence by sentence and rewrites in the third person
what the user stated outright: preferences ("I prefer …"), decisions ("I decided …", "we
decided …"), facts about the user ("my … is …") and explicit requests ("remember that …").
Questions, hedges ("I think I might …") and anything not stated in those shapes are left
alone. It is the engine of the offline heuristic extractor (``cairn.extract.offline_rules``)
and of the demo's agent (``cairn.demo.conversation_script``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Statement:
    """One explicit statement, rewritten in the third person."""

    category: str
    content: str


# (a sentence without its final stop) -> a statement, or None if it is not one.
Rule = Callable[[str], Statement | None]

_LATER_PRONOUNS = (
    (r"\bI'm\b", "they're"),
    (r"\bI am\b", "they are"),
    (r"\bmyself\b", "themselves"),
    (r"\bmine\b", "theirs"),
    (r"\bmy\b", "their"),
    (r"\bme\b", "them"),
    (r"\bI\b", "they"),
)


def _third_person(clause: str) -> str:
    """Speaker pronouns after the subject become they/their/them."""
    for pattern, replacement in _LATER_PRONOUNS:
        clause = re.sub(pattern, replacement, clause, flags=re.IGNORECASE)
    return clause


def _prefer(sentence: str) -> Statement | None:
    if match := re.fullmatch(r"I (?:really )?prefer (.+)", sentence, flags=re.IGNORECASE):
        return Statement("preference", f"The user prefers {_third_person(match[1])}.")
    return None


def _decided(sentence: str) -> Statement | None:
    pattern = r"(?:I|we) (?:have |had )?decided ((?:to|that|on) .+)"
    if match := re.fullmatch(pattern, sentence, flags=re.IGNORECASE):
        return Statement("decision", f"The user decided {_third_person(match[1])}.")
    return None


def _my_x_is(sentence: str) -> Statement | None:
    if match := re.fullmatch(r"My ([\w' -]{1,40}?) (is|are) (.+)", sentence, flags=re.IGNORECASE):
        return Statement("fact", f"The user's {match[1]} {match[2]} {_third_person(match[3])}.")
    return None


def _remember_that(sentence: str) -> Statement | None:
    match = re.fullmatch(r"(?:please )?remember that (.+)", sentence, flags=re.IGNORECASE)
    if match is None:
        return None
    clause = match[1]
    for rule in (_prefer, _decided, _my_x_is):
        if (inner := rule(clause)) is not None:
            return inner
    # The clause's own subject names the user; later pronouns refer back to it.
    clause = re.sub(r"^(?:I'm|I am)\b", "the user is", clause, flags=re.IGNORECASE)
    clause = re.sub(r"^my\b", "the user's", clause, flags=re.IGNORECASE)
    clause = _third_person(clause)
    return Statement("fact", f"{clause[0].upper()}{clause[1:]}.")


RULES: tuple[Rule, ...] = (_prefer, _decided, _my_x_is, _remember_that)


def statements_in(text: str) -> list[Statement]:
    """The explicit first-person statements in one user message, in order; questions skipped."""
    found: list[Statement] = []
    for sentence in re.split(r"(?<=[.!?])\s+", text.strip()):
        if not sentence or sentence.endswith("?"):
            continue
        bare = sentence.rstrip(".!").strip()
        for rule in RULES:
            if (statement := rule(bare)) is not None:
                found.append(statement)
                break
    return found


_ATTRIBUTE = re.compile(r"^The user's ([\w' -]{1,40}?) (?:is|are) ", flags=re.IGNORECASE)


def stated_attribute(content: str) -> str | None:
    """The attribute a "The user's X is …" statement sets (``x``, casefolded), else ``None``.

    Two such statements about one attribute with different values conflict: the later one
    replaces the earlier ("The user's office is in Porto." after "… in Lisbon.").
    """
    match = _ATTRIBUTE.match(content.strip())
    return match[1].casefold() if match else None
