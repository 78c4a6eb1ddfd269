"""What a user states about themselves, read by rules: no model, no inference, no download.

``statements_in(text)`` reads one user message sentence by sentence and rewrites in the third
person what the user stated outright about themselves: facts ("I work on distributed systems
at a startup in Seattle", "my dog Pixel is a corgi"), relationships and places ("my sister
lives in Oslo", "I grew up in Lyon"), dates ("I was born in 1990"), preferences ("I like sushi
with tuna", "I can't stand jazz", "my favourite colour is blue"), plans ("I'm moving to Berlin
in May", "we are planning a spring trip to Japan"), decisions ("we decided to use Postgres"),
negations ("I don't eat meat", "I no longer work at Acme") and corrections ("Actually, I live
in Portland now"); with ``requests``, also what it asked for ("Book a ryokan for two nights"),
which only a summary keeps. Greetings and markers ("Hello,", "Actually,", "Remember this:") are
read past; questions, hedges ("I think I might …", "maybe"), reactions ("I love that") and
passing states ("I'm tired", "I have a question") file nothing. The vocabulary is in
``cairn.extract.statement_words``.

It is the floor of offline extraction (``cairn.extract.offline_rules``), measured on the labelled
set in ``benchmarks/extraction_eval`` (precision and recall in docs/extraction.md). It cannot
infer ("ugh, Mondays"), resolve coreference across sentences ("my sister … she lives in Oslo"
files nothing about the sister's home), resolve relative dates ("next month" stays relative),
or read anything but the user's own words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cairn.extract import statement_words as words
from cairn.extract.statement_words import bare_sentence, conjugated


@dataclass(frozen=True)
class Statement:
    """One explicit statement, rewritten in the third person; ``category`` is one of fact,
    preference, plan, decision or request."""

    category: str
    content: str


def _statement(category: str, subject: str, rest: str) -> Statement:
    content = f"{subject} {words.third_person(rest)}".strip()
    return Statement(category, content[0].upper() + content[1:] + ".")


def _my(bare: str) -> Statement | None:
    subject = r"my ((?:[\w'-]+ ){0,4}?[\w'-]+)"
    match = re.fullmatch(rf"{subject} ((?:is|are|was|were|has|have|had)\b.*)", bare, re.I)
    if match is None:
        verbs = r"(?:\w+s|\w+ed|just \w+|will \w+|can \w+|got|grew|came|went|ran|left|met)"
        match = re.fullmatch(rf"{subject} ({verbs}\b.+)", bare, re.I)
    if match is None:
        return None
    category = "preference" if re.match(r"favou?rite\b", match[1], re.I) else "fact"
    return _statement(category, f"the user's {match[1]}", match[2])


def _negated(phrase: str) -> Statement | None:
    match = re.fullmatch(r"(do not|did not|cannot|will not|never|no longer) (\w+)(.*)", phrase)
    if match is None or match[2].lower() in words.NOT_A_FACT_AFTER_DO_NOT:
        return None
    negator, verb, rest = match[1], match[2], match[3]
    lower = verb.lower()
    if lower in words.TASTE or lower == "stand":
        category = "preference"
    elif lower in words.DURABLE | words.HABITUAL | {"have"}:
        category = "plan" if negator == "will not" else "fact"
    else:
        return None
    if negator in ("never", "no longer"):
        verb = conjugated(verb)
    said = {"do not": "does not"}.get(negator, negator)
    return _statement(category, "the user", f"{said} {verb}{rest}")


def _am(rest: str) -> Statement | None:
    if re.match(r"(?:going to|planning to|planning on)\b", rest, re.I):
        return _statement("plan", "the user", f"is {rest}")
    if match := re.fullmatch(r"(\w+ing)\b.*", rest):
        if match[1].lower() in words.ONGOING_PLAN:
            return _statement("plan", "the user", f"is {rest}")
        if match[1].lower() in words.ONGOING_FACT:
            return _statement("fact", "the user", f"is {rest}")
        return None
    if words.PREFERENCE_STATE.match(rest):
        return _statement("preference", "the user", f"is {rest}")
    if words.STATE.match(rest):
        return _statement("fact", "the user", f"is {rest}")
    return None


def _i(bare: str) -> Statement | None:  # one return per sentence shape
    match = re.fullmatch(rf"I (?:(?:{words.ADVERBS}) )*(.+)", bare)
    if match is None:
        return None
    phrase = match[1]
    first, _, rest = phrase.partition(" ")
    lower = first.lower()
    if lower == "am":
        return _am(rest)
    if lower in ("decided", "chose") or (lower == "have" and rest.startswith("decided ")):
        return _statement("decision", "the user", phrase.replace("have ", "has ", 1))
    if lower == "have":
        if re.match(r"(?:to|got to)\b", rest) or words.TRANSIENT_OBJECT.match(rest):
            return None
        return _statement("fact", "the user", f"has {rest}")
    if lower == "will" or (lower in ("plan", "intend") and rest.startswith("to ")):
        return _statement(
            "plan", "the user", f"{conjugated(first)} {rest}".replace("plan ", "plans ", 1)
        )
    if (lower == "would" and rest.startswith("rather ")) or (
        lower in words.TASTE and rest and not words.REACTION.match(rest)
    ):
        return _statement("preference", "the user", f"{conjugated(first)} {rest}")
    if (lower == "was" and re.match(r"(?:born|raised|a|an|married)\b", rest)) or (
        lower == "used" and rest.startswith("to ")
    ):
        return _statement("fact", "the user", phrase)
    if negated := _negated(phrase):
        return negated
    if (lower in words.HABITUAL and words.FREQUENCY.search(rest)) or (
        lower in words.DURABLE and rest
    ):
        return _statement("fact", "the user", f"{conjugated(first)} {rest}")
    return None


def _we(bare: str) -> Statement | None:
    if match := re.fullmatch(r"we (?:have |had )?((?:decided|chose) .+)", bare, re.I):
        return _statement("decision", "the user", match[1])
    plans = r"are (?:planning|going|moving|getting|starting|visiting|flying|travell?ing)|will|plan"
    if match := re.fullmatch(rf"we ((?:{plans})\b.+)", bare, re.I):
        return _statement("plan", "the user and others", match[1])
    return None


def statements_in(text: str, *, requests: bool = False) -> list[Statement]:
    """The statements one user message makes about the user, in order; with ``requests``,
    also what it asked to be done ("Book a table" -> "The user asked to book a table.")."""
    found: list[Statement] = []
    for sentence in re.split(r"(?<=[.!?;])\s+|\n+", text.strip()):
        bare = bare_sentence(sentence)
        if not bare or sentence.rstrip().endswith("?") or words.HEDGES.search(bare):
            continue
        statement = None
        if re.match(r"I\b", bare):
            statement = _i(bare)
        elif re.match(r"my\b", bare, re.IGNORECASE):
            statement = _my(bare)
        elif re.match(r"we\b", bare, re.IGNORECASE):
            statement = _we(bare)
        elif requests and (asked := words.REQUEST.fullmatch(bare)):
            statement = _statement("request", "the user asked to", f"{asked[1].lower()} {asked[2]}")
        elif words.EXPLICIT.match(sentence):
            statement = _statement("fact", "", bare)  # "Remember that the demo is on Friday."
        if statement is not None:
            found.append(statement)
    return found


_ATTRIBUTE = re.compile(r"^The user's ([\w' -]{1,40}?) (?:is|are) ", flags=re.IGNORECASE)
_NEGATORS = r"(?:does not |did not |no longer |never |is not |is no longer |cannot )?"
_WHERE = re.compile(rf"^The user {_NEGATORS}(lives? in|works? (?:at|for|as)) ", re.IGNORECASE)
_TASTE = re.compile(
    rf"^The user {_NEGATORS}(?:likes?|loves?|enjoys?|adores?|hates?|dislikes?|detests?|"
    r"prefers?|eats?|drinks?|stand) (.+?)\.?$",
    flags=re.IGNORECASE,
)
_IS = re.compile(r"^The user is (?:not |no longer )?([\w-]+)\.?$", flags=re.IGNORECASE)


def stated_attribute(content: str) -> str | None:
    """The attribute a statement sets, casefolded, else ``None``: "The user's X is …" sets
    ``x``; "lives in" / "works at|for|as" set where the user lives or works; a taste ("likes
    tea", "does not like tea") sets the taste for its object; "is [not] vegetarian" sets that.

    Two statements of one attribute with different content conflict: the later replaces the
    earlier ("The user's office is in Porto." after "… in Lisbon."; "The user no longer works
    at Acme." after "The user works at Acme.").
    """
    content = content.strip()
    if match := _ATTRIBUTE.match(content):
        return match[1].casefold()
    if match := _WHERE.match(content):
        return match[1].casefold().replace("lives", "live").split()[0] + ":"
    if match := _TASTE.match(content):
        return "taste:" + match[1].casefold()
    if match := _IS.match(content):
        return "is:" + match[1].casefold()
    return None
