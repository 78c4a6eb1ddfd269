"""What a model must answer for the episodic strategy: episodes, and reflections across them.

An episode is one segment of a session told as the service describes it: the situation the
user was in, what they intended, the actions taken (the assistant's and tools' steps), and
the outcome. cairn writes the record's content from these fields (``episode_content``), so
every episode reads alike whichever provider answered. A reflection is one line of insight
drawn from several episodes, citing them by alias; it may name the existing reflection it
replaces (``replaces``), which then gets a new version.
"""

from __future__ import annotations

from pydantic import Field

from cairn.answers.extraction import MAX_EVIDENCE, Alias, FactText, SummaryText
from cairn.models import Frozen

# A session segment is one episode, rarely more: a model may split it where the user's goal
# changed.
MAX_EPISODES = 4
MAX_ACTIONS = 8
MAX_REFLECTIONS = 4

EPISODE_LABELS = ("Situation", "Intent", "Actions", "Outcome")


class EpisodeCandidate(Frozen):
    """One episode, citing the messages it was told from."""

    situation: FactText
    intent: FactText
    actions: tuple[FactText, ...] = Field(min_length=1, max_length=MAX_ACTIONS)
    outcome: FactText
    evidence: tuple[Alias, ...] = Field(min_length=1, max_length=MAX_EVIDENCE)


class EpisodeAnswer(Frozen):
    candidates: tuple[EpisodeCandidate, ...] = Field(max_length=MAX_EPISODES)


class ReflectionCandidate(Frozen):
    """One insight across episodes; ``evidence`` are episode aliases (two at least: a
    reflection is drawn across episodes)."""

    content: SummaryText
    evidence: tuple[Alias, ...] = Field(min_length=2, max_length=MAX_EVIDENCE)
    replaces: Alias | None = None


class ReflectionAnswer(Frozen):
    candidates: tuple[ReflectionCandidate, ...] = Field(max_length=MAX_REFLECTIONS)


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def episode_content(episode: EpisodeCandidate) -> str:
    """The record text of an episode: one line, its four parts labelled."""
    actions = "; ".join(a.strip().rstrip(".") for a in episode.actions)
    parts = (episode.situation, episode.intent, actions, episode.outcome)
    labelled = zip(EPISODE_LABELS, parts, strict=True)
    return " ".join(f"{label}: {_sentence(part)}" for label, part in labelled)


def episode_parts(content: str) -> dict[str, str]:
    """The labelled parts of an episode's text (``episode_content``); those it lacks are
    absent (an episode written by hand may have none)."""
    found: dict[str, str] = {}
    positions = sorted(
        (content.find(f"{label}: "), label)
        for label in EPISODE_LABELS
        if content.find(f"{label}: ") >= 0
    )
    for index, (start, label) in enumerate(positions):
        end = positions[index + 1][0] if index + 1 < len(positions) else len(content)
        found[label] = content[start + len(label) + 2 : end].strip().rstrip(".")
    return found
