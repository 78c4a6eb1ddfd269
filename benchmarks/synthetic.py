"""Procedural memory for the speed benchmark: realistic one-line facts, questions, and vectors.

Facts come from templates filled from small vocabularies with a seeded generator, so every run
writes the same records. Real vectors (the ONNX MiniLM embedder) are made for ``REAL_VECTORS``
facts; beyond that, fact ``i`` gets the real vector of fact ``i mod REAL_VECTORS`` plus seeded
Gaussian noise, renormalised (cosine to its source about 0.7): vectors with MiniLM's geometry
at a fraction of the embedding time. Their content and vector then disagree, which changes
what is ranked, not how long ranking takes.
"""

from __future__ import annotations

import random

import numpy as np

from cairn.ports import FloatMatrix

REAL_VECTORS = 1_000
NOISE = 0.045  # per dimension; a 384-d unit vector plus this noise keeps cosine ~0.7 to it
SEED = 8


def _vocabulary(words: str) -> tuple[str, ...]:
    """Entries separated by "|" (some hold spaces: "green tea")."""
    return tuple(word.strip() for word in words.split("|"))


_PEOPLE = _vocabulary("Ana|Ben|Chloe|Dev|Elif|Farah|Gus|Hana|Ivo|Jun|Kai|Lena|Milo|Nia|Omar|Pia")
_RELATIONS = _vocabulary("sister|brother|mother|father|partner|colleague|neighbour|friend")
_FOODS = _vocabulary("ramen|tacos|sushi|lentil soup|pho|dumplings|paella|falafel|curry|risotto")
_DRINKS = _vocabulary("oat latte|green tea|espresso|matcha|chai|cold brew|sparkling water")
_CITIES = _vocabulary("Lisbon|Kyoto|Austin|Oslo|Nairobi|Lima|Porto|Hanoi|Krakow|Denver|Seoul")
_HOBBIES = _vocabulary("bouldering|pottery|sailing|chess|running|birding|baking|knitting")
_TOOLS = _vocabulary("Rust|Go|Python|Kotlin|Terraform|Postgres|Kafka|React|Swift|Elixir")
_PETS = _vocabulary("cat|dog|parrot|rabbit|tortoise|hamster")
_MONTHS = _vocabulary("January|February|March|April|May|June|July|August|September|October")
_WEEKDAYS = _vocabulary("Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday")

_FACTS = (
    "Prefers {drink} in the morning and never drinks coffee after {hour} pm",
    "Is allergic to {food} and avoids restaurants that serve it",
    "Has a {pet} named {person} who is {age} years old",
    "Their {relation} {person} lives in {city} and visits every {month}",
    "Took up {hobby} in {month} {year} and goes every {weekday}",
    "Works mostly in {tool} and is learning {tool2} for a side project",
    "Visited {city} in {month} {year} and wants to go back for the food",
    "Runs the weekly planning meeting on {weekday} at {hour} am",
    "Decided to move the team's deploys from {tool} to {tool2} after the outage",
    "Lesson: always pin the {tool} version before upgrading the build image",
    "Is saving for a trip to {city} with {person} next {month}",
    "Cooks {food} for friends on {weekday} evenings",
    "Keeps a {hobby} journal and reviews it at the end of each month",
    "Asked to be reminded about {person}'s birthday on {month} {day}",
)
_QUESTIONS = (
    "What does the user like to drink?",
    "Which food is the user allergic to?",
    "What is the name of the user's pet?",
    "Where does the user's {relation} live?",
    "What hobby did the user pick up?",
    "Which programming languages does the user work with?",
    "Which cities has the user visited?",
    "When is the weekly planning meeting?",
    "Why did the team change its deploy tooling?",
    "Where is the user planning to travel next?",
    "What does the user cook for friends?",
    "When is {person}'s birthday?",
)


def _fill(template: str, rng: random.Random) -> str:
    tool, tool2 = rng.sample(_TOOLS, 2)
    return template.format(
        drink=rng.choice(_DRINKS),
        food=rng.choice(_FOODS),
        pet=rng.choice(_PETS),
        person=rng.choice(_PEOPLE),
        relation=rng.choice(_RELATIONS),
        city=rng.choice(_CITIES),
        hobby=rng.choice(_HOBBIES),
        tool=tool,
        tool2=tool2,
        month=rng.choice(_MONTHS),
        weekday=rng.choice(_WEEKDAYS),
        year=rng.randint(2015, 2026),
        hour=rng.randint(1, 11),
        day=rng.randint(1, 28),
        age=rng.randint(1, 15),
    )


def facts(count: int, seed: int = SEED) -> list[str]:
    """``count`` one-line facts, the same for the same ``seed``."""
    rng = random.Random(seed)
    return [_fill(rng.choice(_FACTS), rng) for _ in range(count)]


def questions(count: int, seed: int = SEED + 1) -> list[str]:
    """``count`` questions a user might ask of such a memory."""
    rng = random.Random(seed)
    return [_fill(rng.choice(_QUESTIONS), rng) for _ in range(count)]


def stretch(real: FloatMatrix, count: int, seed: int = SEED) -> FloatMatrix:
    """``count`` unit vectors: ``real`` itself first, then noisy copies of its rows in turn."""
    rng = np.random.default_rng(seed)
    rows = np.arange(count) % real.shape[0]
    vectors = real[rows].astype(np.float32, copy=True)
    extra = count - min(count, real.shape[0])
    if extra:
        noise = rng.normal(0.0, NOISE, size=(extra, real.shape[1])).astype(np.float32)
        vectors[real.shape[0] :] += noise
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    result: FloatMatrix = vectors / np.where(norms > 0, norms, 1.0)
    return result
