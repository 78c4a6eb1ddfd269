"""The vocabulary of ``cairn.extract.statements``: which words mark what, and the third person.

Word lists decide what a first-person sentence states: a verb of taste makes a preference,
a durable verb (work, live, grew up …) a fact, a passing object ("I have a question") nothing.
``third_person`` rewrites the rest of a clause after "the user": speaker pronouns become
they/their/them and coordinated verbs agree ("and fly Cessnas" -> "and flies Cessnas").
"""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


TASTE = _words("like love enjoy adore hate dislike detest prefer")
DURABLE_PRESENT = _words(
    "work live study teach play speak own use drive ride run lead manage volunteer cook "
    "collect code write practice practise fly train eat drink attend belong grow smoke"
)
DURABLE_PAST = _words(
    "worked lived studied taught played spoke owned used drove rode ran led managed moved "
    "started joined left graduated met married bought adopted sold built founded quit retired "
    "switched relocated visited travelled traveled grew finished won spent came got raised"
)
DURABLE = DURABLE_PRESENT | DURABLE_PAST
HABITUAL = _words("go take walk bike swim")
PRESENT = DURABLE_PRESENT | TASTE | HABITUAL
ONGOING_PLAN = _words(
    "moving planning going starting getting visiting flying travelling traveling leaving "
    "retiring switching relocating"
)
ONGOING_FACT = _words(
    "working learning studying training building writing living teaching running raising dating"
)
NOT_A_FACT_AFTER_DO_NOT = _words("know remember understand think care mind see get")
ADVERBS = (
    "also|really|usually|often|still|now|currently|sometimes|always|just|mostly|recently|"
    "actually|totally|absolutely|generally|typically|mainly|normally|definitely|honestly"
)
FREQUENCY = re.compile(r"\b(?:every|each|daily|weekly|usually|on (?:\w+day)s)\b", re.IGNORECASE)
MARKERS = re.compile(
    r"^(?:hi|hello|hey|ok|okay|so|well|oh|also|and|but|btw|by the way|anyway|actually|in fact|"
    r"fyi|just so you know|for the record|note|please note|correction|sorry|no|yes|yeah|yep|"
    r"right|fun fact|(?:please )?remember(?: this| that)?|(?:please )?note that|"
    r"(?:please )?keep in mind(?: that)?|just to clarify|to be clear|i meant|i mean)"
    r"(?:[,:!-]+\s*|\s+)",
    flags=re.IGNORECASE,
)
EXPLICIT = re.compile(
    r"^(?:\W*\w+[,!]\s+)?(?:please )?(?:remember|note|keep in mind)\b", flags=re.IGNORECASE
)
HEDGES = re.compile(
    r"\b(?:maybe|might|perhaps|probably|possibly|i think|i guess|i suppose|not sure|i wonder|"
    r"i wish|if i|if we|would be nice|kind of|sort of|i feel like|unless)\b",
    flags=re.IGNORECASE,
)
CONTRACTIONS = (
    (r"\bI'm\b", "I am"),
    (r"\bI've\b", "I have"),
    (r"\bI'll\b", "I will"),
    (r"\bI'd\b", "I would"),
    (r"\bwe're\b", "we are"),
    (r"\bwe've\b", "we have"),
    (r"\bwe'll\b", "we will"),
    (r"\bdon't\b", "do not"),
    (r"\bdidn't\b", "did not"),
    (r"\bcan't\b", "cannot"),
    (r"\bwon't\b", "will not"),
    (r"\bhaven't\b", "have not"),
    (r"\bwasn't\b", "was not"),
)
STATE = re.compile(
    r"^(?:(?:not |no longer )?(?:from|based in|originally from|married|engaged|divorced|single|"
    r"widowed|allergic to|vegetarian|vegan|pescatarian|retired|pregnant|left-handed|"
    r"right-handed|colou?rblind|lactose intolerant|gluten[- ]free|diabetic|self-employed|"
    r"unemployed|an only child|the (?:oldest|youngest)|\d+ years old|a|an|into|part of|"
    r"responsible for|in charge of|fluent in|a member of)\b)",
    flags=re.IGNORECASE,
)
PREFERENCE_STATE = re.compile(r"^(?:not )?(?:a (?:big |huge )?fan of|into)\b", re.IGNORECASE)
TRANSIENT_OBJECT = re.compile(
    r"^(?:a |an |one |another )?(?:question|problem|issue|meeting|call|idea|minute|moment|"
    r"doubt|headache|cold|sec|second|bug|error|feeling|suggestion|request)\b",
    flags=re.IGNORECASE,
)
REACTION = re.compile(r"^(?:it|that|this|those|these|you|your|the idea|how|what)\b", re.I)
REQUEST = re.compile(
    r"^(?:please )?(book|find|schedule|remind|send|buy|order|call|cancel|reserve|set up|add|"
    r"email|plan|arrange|draft|make)\b (.+)",
    flags=re.IGNORECASE,
)
_LATER_PRONOUNS = (
    (r"\bmyself\b", "themselves"),
    (r"\bmine\b", "theirs"),
    (r"\bmy\b", "their"),
    (r"\bme\b", "them"),
    (r"\bI am\b", "they are"),
    (r"\bI\b", "they"),
    (r"\bour\b", "their"),
    (r"\bus\b", "them"),
)


def third_person_verb(verb: str) -> str:
    """``verb`` as it follows "the user": have -> has, study -> studies, work -> works."""
    irregular = {"be": "is", "am": "is", "have": "has", "do": "does", "go": "goes"}
    lower = verb.lower()
    if lower in irregular:
        return irregular[lower]
    if re.search(r"(?:s|sh|ch|x|z|o)$", lower):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lower):
        return verb[:-1] + "ies"
    return verb + "s"


def conjugated(verb: str) -> str:
    """A present-tense verb in the third person; any other word unchanged."""
    return third_person_verb(verb) if verb.lower() in PRESENT else verb


def third_person(clause: str) -> str:
    """Speaker pronouns become they/their/them; "and I fly" / "and fly" become "and flies"."""
    clause = re.sub(r"\band I (?:also )?(\w+)", lambda m: "and " + conjugated(m[1]), clause)
    clause = re.sub(r"\band (\w+)\b", lambda m: "and " + conjugated(m[1]), clause)
    for pattern, replacement in _LATER_PRONOUNS:
        clause = re.sub(pattern, replacement, clause, flags=re.IGNORECASE)
    return clause


def bare_sentence(sentence: str) -> str:
    """The sentence without its stop, leading greetings and markers, contractions expanded."""
    bare = sentence.replace("’", "'").rstrip(".!;").strip()
    while (stripped := MARKERS.sub("", bare, count=1)) != bare:
        bare = stripped.strip()
    for pattern, replacement in CONTRACTIONS:
        bare = re.sub(pattern, replacement, bare, flags=re.IGNORECASE)
    return bare
