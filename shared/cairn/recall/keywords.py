"""Keyword scoring: a small tokenizer, Okapi BM25 and token-set Jaccard, all pure.

The tokenizer NFKC-normalises and casefolds, splits on anything that is not a letter or digit,
drops a short English stopword list, and strips a few suffixes (plural ``-s``, ``-ing``,
``-ed``, a final ``-e``) so ``likes`` / ``liked`` / ``liking`` meet. It is light suffix
stripping, not Porter: the same function runs on the query and the rows, so a crude stem still
matches itself.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

_WORD = re.compile(r"[^\W_]+")

# Function words that carry no topic, plus contraction tails left by splitting on "'".
# A word list reads best as prose; a list literal would be ninety lines.
STOPWORDS = frozenset(
    """
    a an and are as at be been being but by can could did do does doing for from had has have
    having he her hers him his how i if in into is it its itself just me my myself no nor not
    of on or our ours she should so than that the their theirs them then there these they this
    those to too us very was we were what when where which while who whom why will with would
    you your yours s t d ll m re ve
    """.split()  # noqa: SIM905
)

_MIN_STEM = 3


# Words repeat across rows and recalls; stemming was most of a recall's CPU time. The cache holds
# single words, bounded, never whole contents.
@lru_cache(maxsize=32_768)
def _stem(word: str) -> str:
    """Light suffix stripping: Harman's S-stemmer (-ies to -y; -es and -s drop the s), then
    -ied/-ing/-ed, an undoubled final consonant, and a final -e."""
    if word.isdigit() or len(word) <= _MIN_STEM:
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith(("us", "ss")):
        word = word[:-1]
    if word.endswith("ied") and len(word) > _MIN_STEM + 1:
        word = word[:-3] + "y"
    elif word.endswith("ing") and len(word) - 3 >= _MIN_STEM:
        word = word[:-3]
    elif word.endswith("ed") and len(word) - 2 >= _MIN_STEM:
        word = word[:-2]
    if len(word) > _MIN_STEM and word[-1] == word[-2] and word[-1] not in "aeioulsz":
        word = word[:-1]
    if len(word) > _MIN_STEM and word.endswith("e"):
        word = word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    """The keyword tokens of ``text``, in order, stopwords dropped and stemmed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return [_stem(word) for word in _WORD.findall(folded) if word not in STOPWORDS]


def query_terms(query: Sequence[str]) -> tuple[str, ...]:
    """The distinct terms of a tokenized query, in the order they first appear.

    BM25 and the query's term weight add one float per term, and float addition is not
    associative: summing in ``set`` order would let a score's last bit depend on the process's
    hash seed. Every scorer (the scan and the recall index) iterates this order instead.
    """
    return tuple(dict.fromkeys(query))


def bm25_scores(
    query: Sequence[str],
    documents: Sequence[Sequence[str]],
    *,
    k1: float,
    b: float,
) -> list[float]:
    """Okapi BM25 of each tokenized document for the tokenized query; 0 iff no term is shared.

    idf uses the non-negative form ``ln(1 + (N - df + 0.5) / (df + 0.5))`` (as Lucene does), so
    a term present in every row still counts a little instead of subtracting.
    """
    terms = query_terms(query)
    if not terms or not documents:
        return [0.0] * len(documents)
    counts = [Counter(doc) for doc in documents]
    total = len(documents)
    average = sum(len(doc) for doc in documents) / total or 1.0
    frequency = Counter(term for doc in counts for term in terms if term in doc)
    idf = {
        term: math.log(1 + (total - frequency[term] + 0.5) / (frequency[term] + 0.5))
        for term in terms
    }
    scores: list[float] = []
    for doc, tf in zip(documents, counts, strict=True):
        norm = k1 * (1 - b + b * len(doc) / average)
        # Summed term by term, left to right (not ``sum``, which compensates from Python 3.12):
        # a recall index adds the same terms in the same order and gets the same bits.
        score = 0.0
        for t in terms:
            if tf[t] > 0:
                score += idf[t] * tf[t] * (k1 + 1) / (tf[t] + norm)
        scores.append(score)
    return scores


def jaccard(left: Sequence[str], right: Sequence[str]) -> float:
    """Token-set Jaccard similarity in [0, 1]; two empty sets count as identical."""
    a, b = set(left), set(right)
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)
