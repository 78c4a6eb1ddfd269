"""Taint: which untrusted memories a session has shown, and whether a call's arguments carry them.

A recalled entry is labelled by the join of its sources (``trusted`` only if every source is the
user's or the system's; a quarantined source makes it untrusted at read time). Every untrusted
entry the session shows the model, in a run's block, a per-turn injection or a
``memory_recall`` answer, goes into the session's ``TaintLedger`` with the journal id of the
recall that showed it. The ledger is never emptied while the session lasts: the host may carry
the conversation (and the tool results in it) from run to run.

``TaintLedger.derived(arguments, strict=...)`` decides whether a call is derived from untrusted
recall without trusting content, by comparing text alone:

- both sides are normalised: invisible characters and their ``<U+XXXX>`` markers removed,
  NFKC, casefolded, split into words (letters and digits; punctuation and spacing dropped);
- an entry taints the call when any run of ``SHINGLE_WORDS`` (5) consecutive words of one of
  the call's string values occurs in the entry, when an entry shorter than that occurs whole in
  a value, or when a whole value of at least two words occurs in the entry (a record id or a
  short phrase the planted text named);
- in strict mode every untrusted entry the session has shown taints every call.

What the overlap check does not catch: a paraphrase, a translation, an encoding (base64, one
letter per line), a value assembled from fragments shorter than five words, or a single word;
the strict mode is for hosts that cannot accept that. It can also flag text the user genuinely
repeated from an untrusted entry; the release exists for that.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cairn.models import Trust
from cairn.runtime.session_store import RecalledItem
from cairn.visible_text import neutralised

SHINGLE_WORDS = 5
_MARKER = re.compile(r"<U\+[0-9A-F]{4,6}>")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class TaintedEntry:
    """An untrusted entry the session showed: the recalled item and the recall that showed it
    (``journal_id``; ``None`` where the store journals its own retrievals)."""

    item: RecalledItem
    journal_id: str | None
    # The entry's words and shingles, computed once when it is shown.
    words: tuple[str, ...] = ()
    shingles: frozenset[tuple[str, ...]] = frozenset()

    @property
    def record_id(self) -> str:
        return self.item.record_id


def words(text: str) -> tuple[str, ...]:
    """``text`` as the check compares it: no invisible characters or markers, NFKC, casefolded,
    words only."""
    visible = _MARKER.sub(" ", neutralised(text))
    return tuple(_WORD.findall(unicodedata.normalize("NFKC", visible).casefold()))


def _shingles(tokens: Sequence[str]) -> set[tuple[str, ...]]:
    size = SHINGLE_WORDS
    return {tuple(tokens[i : i + size]) for i in range(len(tokens) - size + 1)}


def _contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    size = len(needle)
    return any(
        tuple(haystack[i : i + size]) == tuple(needle) for i in range(len(haystack) - size + 1)
    )


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a JSON-like value (mapping values and keys, list items), depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, inner in value.items():
            yield from strings_in(key)
            yield from strings_in(inner)
    elif isinstance(value, list | tuple):
        for inner in value:
            yield from strings_in(inner)


def overlaps(entry_text: str, values: Iterable[str]) -> bool:
    """Whether any of ``values`` carries ``entry_text`` by the rules in the module docstring."""
    entry = words(entry_text)
    return _carried(entry, frozenset(_shingles(entry)), _prepared(values))


_Given = list[tuple[tuple[str, ...], set[tuple[str, ...]]]]


def _prepared(values: Iterable[str]) -> _Given:
    """Each value's words and shingles, computed once for every entry compared."""
    return [(said, _shingles(said)) for said in map(words, values)]


def _carried(
    entry: tuple[str, ...], entry_shingles: frozenset[tuple[str, ...]], given: _Given
) -> bool:
    if not entry:
        return False
    for value, value_shingles in given:
        if len(entry) < SHINGLE_WORDS and _contains(value, entry):
            return True
        if len(value) >= 2 and _contains(entry, value):
            return True
        if not entry_shingles.isdisjoint(value_shingles):
            return True
    return False


class TaintLedger:
    """The untrusted entries one session has shown the model, first showing kept."""

    def __init__(self) -> None:
        self._entries: dict[str, TaintedEntry] = {}

    def add(self, items: Iterable[RecalledItem], journal_id: str | None) -> None:
        """Note the untrusted ones of ``items``, shown by recall ``journal_id``."""
        for item in items:
            if item.entry.trust is Trust.UNTRUSTED and item.record_id not in self._entries:
                said = words(item.content)
                self._entries[item.record_id] = TaintedEntry(
                    item, journal_id, said, frozenset(_shingles(said))
                )

    @property
    def entries(self) -> tuple[TaintedEntry, ...]:
        return tuple(self._entries.values())

    def derived(self, arguments: Mapping[str, Any], *, strict: bool) -> tuple[TaintedEntry, ...]:
        """The shown untrusted entries ``arguments`` are derived from (all of them if
        ``strict``); empty when the call carries none."""
        if strict:
            return self.entries
        given = _prepared(strings_in(arguments))
        return tuple(e for e in self._entries.values() if _carried(e.words, e.shingles, given))
