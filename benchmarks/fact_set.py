"""The fact set: short records of several synthetic users and the questions asked of them.

``build(seed)`` is deterministic: one ``random.Random`` per user, seeded from ``seed`` and the
user's position, picks which topics of ``benchmarks.fact_topics`` the user told the memory
about, the value and the phrasing of each record, and the questions asked. Every user:

- holds most topics (one record each); a topic that ``changes`` is, for some users, told twice:
  the first record is superseded by the second, and its questions ("where does she work now?")
  are answered by the second only (kind ``superseded``);
- is asked two paraphrases per held topic (kind ``answerable``), each shared question whose
  topics the user holds (answered by all of them), and, for a topic the user never mentioned,
  a shared question none of whose topics the user holds, and some of ``ASKED_ELSEWHERE``: the
  right answer is nothing, or a block marked weak (kind ``no-answer``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from benchmarks.fact_topics import ASKED_ELSEWHERE, SHARED, TOPICS, USERS, Topic

DEFAULT_SEED = 13
TOPICS_HELD = 19  # of len(TOPICS): the rest are asked about with no answer
CHANGE_SHARE = 0.6  # of users holding a topic that changes, the share who changed it
QUESTIONS_PER_TOPIC = 2
ABSENT_QUESTIONS = 1  # per topic the user never mentioned
ELSEWHERE_QUESTIONS = 3


@dataclass(frozen=True)
class FactRecord:
    """One record as the user had it stored; ``supersedes`` names the record it replaced."""

    key: str
    topic: str
    category: str
    content: str
    supersedes: str | None = None


@dataclass(frozen=True)
class FactQuestion:
    """One question and the keys of the records that answer it (none for ``no-answer``)."""

    text: str
    kind: str  # "answerable", "superseded" or "no-answer"
    relevant: tuple[str, ...]
    # The paraphrase family the question's template belongs to: its topic's key, "shared-N"
    # for the N-th shared question, "elsewhere" for one no user was told about.
    family: str = ""


@dataclass(frozen=True)
class UserFacts:
    name: str
    actor_id: str
    records: tuple[FactRecord, ...]
    questions: tuple[FactQuestion, ...]


def _fill(template: str, name: str, pronoun: str, rng: random.Random, value: str = "") -> str:
    """``template`` with its placeholders filled; the way the user is named is drawn per use."""
    possessive, objective = ("her", "her") if pronoun == "she" else ("his", "him")
    who, whose, them = rng.choice(
        (
            (name, f"{name}'s", name),
            ("the user", "the user's", "the user"),
            (pronoun, possessive, objective),
        )
    )
    text = template.format(v=value, name=name, who=who, whose=whose, them=them)
    return text[0].upper() + text[1:]


def _records_for(
    topic: Topic, name: str, pronoun: str, rng: random.Random, changed: bool
) -> list[FactRecord]:
    first, second = rng.sample(topic.values, 2)
    old = FactRecord(
        key=f"{topic.key}",
        topic=topic.key,
        category=topic.category,
        content=_fill(rng.choice(topic.records), name, pronoun, rng, first),
    )
    if not changed:
        return [old]
    new = FactRecord(
        key=f"{topic.key}-now",
        topic=topic.key,
        category=topic.category,
        content=_fill(rng.choice(topic.changes), name, pronoun, rng, second),
        supersedes=old.key,
    )
    return [old, new]


def _user(position: int, name: str, pronoun: str, seed: int) -> UserFacts:
    rng = random.Random(f"{seed}:{position}")
    held = rng.sample(TOPICS, TOPICS_HELD)
    held_keys = {topic.key for topic in held}
    records: list[FactRecord] = []
    questions: list[FactQuestion] = []
    answers: dict[str, str] = {}  # topic -> the key of the record that answers it now
    for topic in held:
        changed = bool(topic.changes) and rng.random() < CHANGE_SHARE
        told = _records_for(topic, name, pronoun, rng, changed)
        records += told
        answers[topic.key] = told[-1].key
        kind = "superseded" if changed else "answerable"
        for template in rng.sample(topic.questions, QUESTIONS_PER_TOPIC):
            questions.append(
                FactQuestion(_fill(template, name, pronoun, rng), kind, (told[-1].key,), topic.key)
            )
    for topic in TOPICS:
        if topic.key not in held_keys:
            for template in rng.sample(topic.questions, ABSENT_QUESTIONS):
                text = _fill(template, name, pronoun, rng)
                questions.append(FactQuestion(text, "no-answer", (), topic.key))
    for number, shared in enumerate(SHARED):
        relevant = tuple(answers[key] for key in shared.about if key in answers)
        kind = "answerable" if relevant else "no-answer"
        for template in shared.questions:
            text = _fill(template, name, pronoun, rng)
            questions.append(FactQuestion(text, kind, relevant, f"shared-{number}"))
    for template in rng.sample(ASKED_ELSEWHERE, ELSEWHERE_QUESTIONS):
        text = _fill(template, name, pronoun, rng)
        questions.append(FactQuestion(text, "no-answer", (), "elsewhere"))
    # Records are told in no particular order; supersessions come after what they replace.
    rng.shuffle(records)
    records.sort(key=lambda r: r.supersedes is not None)
    return UserFacts(name, f"fact-user-{name.lower()}", tuple(records), tuple(questions))


def build(seed: int = DEFAULT_SEED) -> tuple[UserFacts, ...]:
    """Every user of the set, in a fixed order; the same ``seed`` gives the same set."""
    return tuple(_user(i, name, pronoun, seed) for i, (name, pronoun) in enumerate(USERS))
