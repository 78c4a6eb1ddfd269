"""Invisible text made visible: what a reader (a model or a person) is shown of stored content.

Some characters change what text means without showing up: Unicode tag characters (U+E0000 to
U+E007F, which spell ASCII nobody sees), bidirectional controls (U+202A to U+202E, U+2066 to
U+2069, and the marks U+200E, U+200F, U+061C) that reorder what is displayed, zero-width
characters (U+200B to U+200D, U+2060, U+FEFF), the other format characters, the supplementary
variation selectors (U+E0100 to U+E01EF) and, on a terminal, control characters such as ESC,
which start escape sequences. Stored content keeps them exactly (digests and audits depend on
it); every rendering replaces each one with a visible marker ``<U+XXXX>``, so nothing hidden
reaches a prompt or a screen and the reader can see that something was there.
"""

from __future__ import annotations

import re
import unicodedata

from pydantic import BaseModel

_TAGS = (0xE0000, 0xE007F)
_VARIATION_SUPPLEMENT = (0xE0100, 0xE01EF)
# Hangul fillers render as blank space in most fonts yet are letters (category Lo).
_FILLERS = frozenset({0x115F, 0x1160, 0x3164, 0xFFA0})
# The invisible characters ``str.isprintable`` passes: the fillers and the supplementary
# variation selectors (category Mn). Every other invisible one is not printable (categories
# Cf, Cc, or unassigned in the tag block), so printable text without these has none.
_PRINTABLE_INVISIBLE = re.compile(
    f"[{''.join(map(chr, sorted(_FILLERS)))}"
    f"{chr(_VARIATION_SUPPLEMENT[0])}-{chr(_VARIATION_SUPPLEMENT[1])}]"
)
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")  # category Cc, exactly


def is_invisible(character: str, *, controls: bool = True) -> bool:
    """Whether ``character`` is one a reader cannot see; control characters (category Cc,
    line breaks and ESC among them) count only when ``controls``."""
    code = ord(character)
    if _TAGS[0] <= code <= _TAGS[1] or _VARIATION_SUPPLEMENT[0] <= code <= _VARIATION_SUPPLEMENT[1]:
        return True
    if code in _FILLERS:
        return True
    category = unicodedata.category(character)
    return category == "Cf" or (controls and category == "Cc")


def marker(character: str) -> str:
    """The visible stand-in for an invisible character: ``<U+202E>``."""
    return f"<U+{ord(character):04X}>"


def neutralised(text: str, *, controls: bool = True) -> str:
    """``text`` with every invisible character replaced by its marker; visible text is left
    exactly as it was, and neutralising twice changes nothing more. ``controls=False`` leaves
    control characters for the caller (the recall block escapes them its own way)."""
    if text.isascii() and (not controls or text.isprintable()):
        return text
    if _all_visible(text if controls else _CONTROLS.sub("", text)):
        return text
    return "".join(marker(ch) if is_invisible(ch, controls=controls) else ch for ch in text)


def _all_visible(text: str) -> bool:
    """Whether ``text`` holds no invisible character, in two passes over it in C (a check per
    character in Python costs about a microsecond each)."""
    return text.isprintable() and _PRINTABLE_INVISIBLE.search(text) is None


def prompt_json(document: BaseModel, *, exclude_none: bool = False) -> str:
    """``document`` as the JSON a model is shown, every invisible character in its strings a
    marker. JSON already escapes line breaks and the other C0 controls, so what is left to
    mark is the invisible rest (tags, bidi, zero-width, DEL, C1)."""
    return neutralised(document.model_dump_json(exclude_none=exclude_none))
