"""Query understanding: the words that name the memory's own subject, left out of the embedding
(and no keyword evidence on their own).

A memory is about someone: "Kenji is married to Robin", "User owns a red Fiat 500". Asked
"what vehicle does Kenji have?", MiniLM puts most of the query's weight on the name, so every
record that names Kenji outscores "I drive an electric Kia" (cosine 0.57-0.61 against 0.35);
without the name ("what vehicle does have?") the Kia scores 0.44 and the others under 0.12.
The name is no evidence in a memory where most records hold it, just as BM25's idf already
says for the keyword side.

So the text that is embedded leaves out each word that names a person or "the user" and that
a large share of the candidate rows hold: a word starting with a capital letter, or ``user``,
whose keyword token (``cairn.recall.keywords``) is in at least ``policy.subject_share`` of
the rows (at least ``MIN_ROWS`` rows). A possessive ``'s`` and an article before it go with
it. If nothing would be left, the query is embedded as is.

BM25 still matches the whole query, with one exception (``only_the_subject_matched``): when
no row holds any of the query's other words, every keyword match would be on the name alone,
and that is no evidence either, so no row gets a keyword score. Before, each row naming the
user then took a keyword share the others had not, and on the fact set such rows ("Maya starts
the day with green tea", "User owns a 2012 Volvo estate") outranked the answer to "how does
Maya get to the office?" or "what should the valet expect the user to arrive in?". Leaving the
name out of BM25 altogether does as much there but costs LoCoMo, whose speakers' names do tie
a question to its turns when its other words match too (docs/benchmarks.md).

The decision reads only document frequencies, which the scan counts over its candidates and
the recall index over its postings, so both embed the same text and score the same keywords.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from cairn.recall.keywords import tokenize

# Below this many rows a share says little: a memory of three facts keeps its query whole.
MIN_ROWS = 8
_WORD = re.compile(r"(?:\b(?:the|a|an)\s+)?([^\W_]+)(?:['’]s\b)?", re.IGNORECASE)
_SUBJECT_WORDS = frozenset({"user"})


def subject_terms(text: str) -> list[str]:
    """The keyword tokens of ``text``'s words that could name the memory's subject, in order
    (a capitalised word, or ``user``)."""
    terms: list[str] = []
    for match in _WORD.finditer(text):
        word = match.group(1)
        if word[0].isupper() or word.casefold() in _SUBJECT_WORDS:
            terms.extend(t for t in tokenize(word) if t not in terms)
    return terms


def embedding_text(text: str, frequency: Callable[[str], int], total: int, share: float) -> str:
    """``text`` without the words naming the subject: those whose token ``frequency`` (rows
    holding it, of ``total``) reaches ``share``; ``text`` itself when none does, or when
    ``share`` is 0, the rows are fewer than ``MIN_ROWS`` or nothing would be left."""
    if share <= 0 or total < MIN_ROWS:
        return text
    frequent = {t for t in subject_terms(text) if frequency(t) >= share * total}
    if not frequent:
        return text
    kept: list[str] = []
    last = 0
    for match in _WORD.finditer(text):
        word = match.group(1)
        tokens = tokenize(word)
        is_subject = (word[0].isupper() or word.casefold() in _SUBJECT_WORDS) and bool(tokens)
        if is_subject and all(t in frequent for t in tokens):
            kept.append(text[last : match.start()])
            last = match.end()
    kept.append(text[last:])
    rewritten = re.sub(r"\s+", " ", "".join(kept)).strip()
    rewritten = re.sub(r"\s+([?.!,;:])", r"\1", rewritten)
    return rewritten if tokenize(rewritten) else text


def only_the_subject_matched(
    text: str, frequency: Callable[[str], int], total: int, share: float
) -> bool:
    """Whether every keyword match of ``text`` would be on the words naming the memory's
    subject: ``embedding_text`` left some out, and no row holds any other token of the query.
    BM25 then scores nothing (``cairn.recall.candidates.gather``)."""
    return subject_left_out(text, tokenize(text), frequency, total, share)[1]


def subject_left_out(
    text: str, tokens: list[str], frequency: Callable[[str], int], total: int, share: float
) -> tuple[str, bool]:
    """``embedding_text`` and ``only_the_subject_matched`` of ``text``, whose keyword tokens
    are ``tokens``, worked out together (the rewrite is read once)."""
    embedded = embedding_text(text, frequency, total, share)
    if embedded == text:
        return embedded, False
    rest = tokenize(embedded)
    return embedded, set(rest) != set(tokens) and not any(frequency(term) for term in rest)
