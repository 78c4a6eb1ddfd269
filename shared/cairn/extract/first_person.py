"""What a user states about themselves, read by rules: no model, no inference, no download.

``first_person_statements(text)`` reads one user message sentence by sentence and rewrites in
the third person what the user stated outright about themselves: facts ("I work on distributed
systems at a startup in Seattle", "my dog Pixel is a corgi"), relationships and places ("my
sister lives in Oslo", "I grew up in Lyon"), dates ("I was born in 1990"), preferences ("I like
sushi with tuna", "I can't stand jazz", "my favourite colour is blue"), plans ("I'm moving to
Berlin in May", "we are planning a spring trip to Japan"), decisions ("we decided to use
Postgres"), negations ("I don't eat meat", "I no longer work at Acme") and corrections
("Actually, I live in Portland now"), plus requests ("Book a ryokan for two nights"), which
only a summary keeps. Greetings and discourse markers ("Hello,", "Actually,", "Remember this:")
are read past; questions, hedges ("I think I might …", "maybe"), reactions ("I love that") and
passing states ("I'm tired", "I have a question") file nothing.

The rules are the floor of offline extraction, measured on the labelled set in
``benchmarks/extraction_eval`` (precision and recall in docs/extraction.md). What they cannot
do: infer ("ugh, Mondays"), resolve coreference across sentences ("my sister … she lives in
Oslo" files nothing about the sister's home), resolve relative dates ("next month" stays
relative) or read anything but the user's own words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Statement:
    """One explicit statement, rewritten in the third person; ``category`` is one of
    fact, preference, plan, decision, request."""

    category: str
    content: str


_WORD = r"[\w'’-]+"
_MARKERS = re.compile(
    r"^(?:hi|hello|hey|ok|okay|so|well|oh|also|and|but|btw|by the way|anyway|actually|in fact|"
    r"fyi|just so you know|for the record|note|please note|correction|sorry|no|yes|yeah|yep|"
    r"right|fun fact|(?:please )?remember(?: this| that)?|(?:please )?note that|"
    r"(?:please )?keep in mind(?: that)?|just to clarify|to be clear|i meant|i mean)"
    r"(?:[,:!-]+\s*|\s+)",
    flags=re.IGNORECASE,
)
_EXPLICIT = re.compile(
    r"^(?:\W*\w+[,!]\s+)?(?:please )?(?:remember|note|keep in mind)\b", flags=re.IGNORECASE
)
_HEDGES = re.compile(
    r"\b(?:maybe|might|perhaps|probably|possibly|i think|i guess|i suppose|not sure|i wonder|"
    r"i wish|if i|if we|would be nice|kind of|sort of|i feel like|unless)\b",
    flags=re.IGNORECASE,
)
_CONTRACTIONS = (
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
_ADVERBS = (
    "also|really|usually|often|still|now|currently|sometimes|always|just|mostly|recently|"
    "actually|totally|absolutely|generally|typically|mainly|normally|definitely|honestly"
)
TASTE = frozenset(
    ["like", "love", "enjoy", "adore", "hate", "dislike", "detest", "prefer"]
)  # a verb whose object is a preference
_DURABLE = frozenset(
    [
        "work",
        "live",
        "study",
        "teach",
        "play",
        "speak",
        "own",
        "use",
        "drive",
        "ride",
        "run",
        "lead",
        "manage",
        "volunteer",
        "cook",
        "collect",
        "code",
        "write",
        "practice",
        "practise",
        "fly",
        "train",
        "eat",
        "drink",
        "attend",
        "belong",
        "grow",
        "worked",
        "lived",
        "studied",
        "taught",
        "played",
        "spoke",
        "owned",
        "used",
        "drove",
        "rode",
        "ran",
        "led",
        "managed",
        "moved",
        "started",
        "joined",
        "left",
        "graduated",
        "met",
        "married",
        "bought",
        "adopted",
        "sold",
        "built",
        "founded",
        "quit",
        "retired",
        "switched",
        "relocated",
        "visited",
        "travelled",
        "traveled",
        "grew",
        "finished",
        "won",
        "spent",
        "came",
        "got",
        "raised",
    ]
)
_HABITUAL = frozenset(["go", "take", "walk", "bike", "swim"])
_FREQUENCY = re.compile(r"\b(?:every|each|daily|weekly|usually|on (?:\w+day)s)\b", re.I)
_ONGOING_PLAN = frozenset(
    [
        "moving",
        "planning",
        "going",
        "starting",
        "getting",
        "visiting",
        "flying",
        "travelling",
        "traveling",
        "leaving",
        "retiring",
        "switching",
        "relocating",
    ]
)
_ONGOING_FACT = frozenset(
    [
        "working",
        "learning",
        "studying",
        "training",
        "building",
        "writing",
        "living",
        "teaching",
        "running",
        "raising",
        "dating",
    ]
)
_STATE = re.compile(
    r"^(?:(?:not |no longer )?(?:from|based in|originally from|married|engaged|divorced|single|"
    r"widowed|allergic to|vegetarian|vegan|pescatarian|retired|pregnant|left-handed|"
    r"right-handed|colou?rblind|lactose intolerant|gluten[- ]free|diabetic|self-employed|"
    r"unemployed|an only child|the (?:oldest|youngest)|\d+ years old|a|an|into|part of|"
    r"responsible for|in charge of|fluent in|a member of)\b)",
    flags=re.IGNORECASE,
)
_PREFERENCE_STATE = re.compile(r"^(?:not )?(?:a (?:big |huge )?fan of|into)\b", re.IGNORECASE)
_TRANSIENT_OBJECT = re.compile(
    r"^(?:a |an |one |another )?(?:question|problem|issue|meeting|call|idea|minute|moment|"
    r"doubt|headache|cold|sec|second|bug|error|feeling|suggestion|request)\b",
    flags=re.IGNORECASE,
)
_REACTION = re.compile(r"^(?:it|that|this|those|these|you|your|the idea|how|what)\b", re.I)
_NO_FACT_AFTER_DO_NOT = frozenset(
    ["know", "remember", "understand", "think", "care", "mind", "see", "get"]
)
_REQUEST = re.compile(
    r"^(?:please )?(book|find|schedule|remind|send|buy|order|call|cancel|reserve|set up|add|"
    r"email|plan|arrange|draft|write|make)\b (.+)",
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


def _third_person(clause: str) -> str:
    """Speaker pronouns become they/their/them; "and I fly" / "and fly" become "and flies"."""
    clause = re.sub(
        r"\band I (?:also )?(\w+)",
        lambda m: "and " + _conjugated(m[1]),
        clause,
    )
    clause = re.sub(
        r"\band (\w+)\b",
        lambda m: "and " + (_conjugated(m[1]) if m[1].lower() in _PRESENT else m[1]),
        clause,
    )
    for pattern, replacement in _LATER_PRONOUNS:
        clause = re.sub(pattern, replacement, clause, flags=re.IGNORECASE)
    return clause


_PRESENT = frozenset(w for w in _DURABLE | TASTE | _HABITUAL if not w.endswith("ed")) - {
    "spent",
    "came",
    "got",
    "ran",
    "led",
    "met",
    "left",
    "quit",
    "won",
    "grew",
    "drove",
    "rode",
    "spoke",
    "taught",
    "sold",
    "built",
    "bought",
}


def _conjugated(verb: str) -> str:
    return third_person_verb(verb) if verb.lower() in _PRESENT else verb


def _sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?;])\s+|\n+", text.strip())
    return [p.strip() for p in parts if p.strip()]


def _bare(sentence: str) -> str:
    bare = sentence.rstrip(".!;").strip()
    while (stripped := _MARKERS.sub("", bare, count=1)) != bare:
        bare = stripped.strip()
    for pattern, replacement in _CONTRACTIONS:
        bare = re.sub(pattern, replacement, bare, flags=re.IGNORECASE)
    return bare.replace("’", "'")


def _statement(category: str, subject: str, rest: str) -> Statement:
    content = f"{subject} {_third_person(rest)}".strip()
    return Statement(category, content[0].upper() + content[1:] + ".")


def _my(bare: str) -> Statement | None:
    match = re.fullmatch(
        r"my ((?:[\w'-]+ ){0,4}?[\w'-]+) ((?:is|are|was|were|has|have|had)\b.*)", bare, re.I
    )
    if match is None:
        verbs = r"(?:\w+s|\w+ed|just \w+|will \w+|can \w+|got|grew|came|went|ran|left|met)"
        match = re.fullmatch(rf"my ((?:[\w'-]+ ){{0,4}}?[\w'-]+) ({verbs}\b.+)", bare, re.I)
    if match is None:
        return None
    subject, rest = match[1], match[2]
    category = "preference" if re.match(r"favou?rite\b", subject, re.I) else "fact"
    return _statement(category, f"the user's {subject}", rest)


def _negated(verb_phrase: str) -> Statement | None:
    match = re.fullmatch(r"(do not|did not|cannot|will not|never|no longer) (\w+)(.*)", verb_phrase)
    if match is None:
        return None
    negator, verb, rest = match[1], match[2], match[3]
    if verb.lower() in _NO_FACT_AFTER_DO_NOT:
        return None
    said = {"do not": "does not"}.get(negator, negator)
    if negator in ("never", "no longer"):
        verb = _conjugated(verb)
    category = "preference" if verb.lower().rstrip("s") in TASTE or verb == "stand" else "fact"
    known = _DURABLE | _HABITUAL | {"smoke", "own"}
    if category == "fact" and verb.lower() not in known and verb.lower().rstrip("s") not in known:
        return None
    if negator == "will not":
        category = "plan"
    return _statement(category, "the user", f"{said} {verb}{rest}")


def _am(rest: str) -> Statement | None:
    if match := re.fullmatch(r"(?:going to|planning to|planning on) (.+)", rest, re.I):
        return _statement("plan", "the user", f"is {rest[: -len(match[1])]}{match[1]}")
    if match := re.fullmatch(r"(\w+ing)\b(.*)", rest):
        verb = match[1].lower()
        if verb in _ONGOING_PLAN:
            return _statement("plan", "the user", f"is {rest}")
        if verb in _ONGOING_FACT:
            return _statement("fact", "the user", f"is {rest}")
        return None
    if _PREFERENCE_STATE.match(rest):
        return _statement("preference", "the user", f"is {rest}")
    if _STATE.match(rest):
        return _statement("fact", "the user", f"is {rest}")
    return None


def _i(bare: str) -> Statement | None:
    match = re.fullmatch(rf"I (?:(?:{_ADVERBS}) )*(.+)", bare)
    if match is None:
        return None
    phrase = match[1]
    first, _, rest = phrase.partition(" ")
    lower = first.lower()
    if lower == "am":
        return _am(rest)
    if lower == "have":
        if re.match(r"(?:to|got to)\b", rest) or _TRANSIENT_OBJECT.match(rest):
            return None
        return _statement("fact", "the user", f"has {rest}")
    if lower == "will":
        return _statement("plan", "the user", phrase)
    if lower in ("plan", "intend") and rest.startswith("to "):
        return _statement("plan", "the user", f"{third_person_verb(lower)} {rest}")
    if lower == "would" and rest.startswith("rather "):
        return _statement("preference", "the user", phrase)
    if lower == "was" and re.match(r"(?:born|raised|a|an|married)\b", rest):
        return _statement("fact", "the user", phrase)
    if lower == "used" and rest.startswith("to "):
        return _statement("fact", "the user", phrase)
    if lower in ("decided", "chose") or (lower == "have" and rest.startswith("decided")):
        return _statement("decision", "the user", phrase)
    if negated := _negated(phrase):
        return negated
    if lower in TASTE or lower == "prefer":
        if not rest or _REACTION.match(rest):
            return None
        return _statement("preference", "the user", f"{third_person_verb(first)} {rest}")
    if lower in _HABITUAL and _FREQUENCY.search(rest):
        return _statement("fact", "the user", f"{third_person_verb(first)} {rest}")
    if lower in _DURABLE and rest:
        return _statement("fact", "the user", f"{_conjugated(first)} {rest}")
    return None


def _we(bare: str) -> Statement | None:
    if match := re.fullmatch(r"we (?:have |had )?(decided|chose) (.+)", bare, re.I):
        return _statement("decision", "the user", f"{match[1]} {match[2]}")
    plans = r"are (?:planning|going|moving|getting|starting|visiting|flying|travell?ing)|will|plan"
    if match := re.fullmatch(rf"we ((?:{plans})\b.+)", bare, re.I):
        return _statement("plan", "the user and others", match[1])
    return None


def first_person_statements(text: str, *, requests: bool = False) -> list[Statement]:
    """The statements one user message makes about the user, in order; with ``requests``,
    also what it asked to be done ("Book a table" -> "The user asked to book a table.")."""
    found: list[Statement] = []
    for sentence in _sentences(text):
        if sentence.endswith("?"):
            continue
        bare = _bare(sentence)
        if not bare or _HEDGES.search(bare):
            continue
        statement = None
        if re.match(r"I\b", bare):
            statement = _i(bare)
        elif re.match(r"my\b", bare, re.IGNORECASE):
            statement = _my(bare)
        elif re.match(r"we\b", bare, re.IGNORECASE):
            statement = _we(bare)
        elif requests and (match := _REQUEST.fullmatch(bare)):
            statement = _statement("request", "the user asked to", f"{match[1].lower()} {match[2]}")
        elif _EXPLICIT.match(sentence):
            statement = _statement("fact", "", bare)  # "Remember that the demo is on Friday"
        if statement is not None:
            found.append(statement)
    return found
