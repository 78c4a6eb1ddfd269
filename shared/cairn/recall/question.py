"""Query understanding: a question that asks for several things, not one.

"Which cities has John been to?", "What activities does Melanie do with her kids?", "How many
times has she moved?", "Which city have both Jean and John visited?": the answer is spread over
several records, often told in different sessions, and no one of them stands out. Context
expansion (``cairn.recall.expansion``) is built for the opposite case, a question whose answer
sits next to its best match: when the three best hits each lend their neighbours relevance,
those neighbours fill the block and push the other parts of the answer out (LoCoMo's
multi-hop questions lose 4 points of R@10 to it). So for such a question only
``policy.list_context_hits`` hits lend.

The cue is read from the words alone, with no model call: a plural asked for ("which cities
have", "what books did"), a count ("how many"), "both", "what are", "names of", "what kinds
of", or a plural noun of the usual kinds after "what". A question it misses is ranked as any
other; one it catches by mistake keeps its best hit's context.
"""

from __future__ import annotations

import re

from cairn.recall.query import RecallPolicy

_PLURALS = (
    "activities|things|books|events|places|hobbies|ways|items|pets|sports|instruments|games|"
    "cities|countries"
)
_SEVERAL = re.compile(
    r"\b(?:both|how many|what are|names of|what (?:kinds?|types?|sorts?) of|in what ways"
    r"|(?:which|what) \w+s (?:has|have|does|do|did|is|are)\b"
    rf"|what (?:\w+ )?(?:{_PLURALS})\b)",
    re.IGNORECASE,
)


def asks_for_several(text: str) -> bool:
    """Whether the question asks for several things (a list, a count, what two share)."""
    return _SEVERAL.search(text) is not None


def context_lenders(policy: RecallPolicy, text: str) -> int:
    """How many of the best hits lend their neighbours relevance for this question."""
    return policy.list_context_hits if asks_for_several(text) else policy.context_hits
