"""The offline heuristic provider's answer to a consolidation request: rules, no model.

It proposes only what rules can see in the records themselves, and adds nothing (extraction
already files what the user stated outright):

- records with the same canonical content are merged (the text kept as it is);
- two records that set the same attribute to different values ("The user's office is in
  Lisbon." and "... in Porto.", ``cairn.extract.statements.stated_attribute``) contradict: the one
  confirmed later holds; on the same day nothing decides, and the pair is marked contested.

It cannot tell that "prefers tea" and "switched to coffee" disagree; a real model can.

``CONSOLIDATION_RESPONDERS`` gives ``cairn.llm.heuristic.HeuristicModel`` the ``Responder`` for
consolidation's schema (``cairn.consolidate.prompts.CONSOLIDATION_SCHEMA``).
"""

from __future__ import annotations

from typing import Any, Final

from cairn.consolidate.prompts import CONSOLIDATION_SCHEMA, ConsolidationInput, ShownRecord
from cairn.extract.statements import stated_attribute
from cairn.llm.heuristic import Responder, read_document
from cairn.models import canonical_content

_MAX_CHANGES = 4  # what the prompt asks a model for


def heuristic_changes(document: ConsolidationInput) -> list[dict[str, Any]]:
    """The changes the rules find in ``document``, at most four, each record named once."""
    changes: list[dict[str, Any]] = []
    named: set[int] = set()
    by_text: dict[str, list[ShownRecord]] = {}
    for record in document.records:
        by_text.setdefault(canonical_content(record.content), []).append(record)
    for same in by_text.values():
        if len(same) > 1:
            aliases = [r.alias for r in same]
            changes.append({"kind": "merge", "records": aliases, "content": same[0].content})
            named.update(aliases)
    by_attribute: dict[str, ShownRecord] = {}
    for record in document.records:
        attribute = stated_attribute(record.content)
        if attribute is None or record.alias in named:
            continue
        earlier = by_attribute.get(attribute)
        if earlier is None or earlier.alias in named:
            by_attribute[attribute] = record
            continue
        changes.append(_contradiction(earlier, record))
        named.update((earlier.alias, record.alias))
    return changes[:_MAX_CHANGES]


def _changes_text(text: str) -> list[dict[str, Any]]:
    return heuristic_changes(read_document(ConsolidationInput, text))


CONSOLIDATION_RESPONDERS: Final = {
    CONSOLIDATION_SCHEMA: Responder(key="changes", answer=_changes_text),
}


def _contradiction(first: ShownRecord, second: ShownRecord) -> dict[str, Any]:
    change: dict[str, Any] = {"kind": "contradiction", "records": [first.alias, second.alias]}
    if first.last_seen != second.last_seen:
        later = first if first.last_seen > second.last_seen else second
        change["holds"] = later.alias
        change["reason"] = "a later statement sets the same attribute"
    return change
