"""The offline answer to the reflection job's contradiction requests
(``cairn.history.contradiction_prompts``), by rule: two records contradict when both are
statements as extraction writes them that set the same attribute
(``cairn.extract.statements.stated_attribute``: "The user's office is in Lisbon." and "… in
Porto.", "The user likes tea." and "The user does not like tea.") to different content. Any
other pair it leaves out: it flags only what that rule can justify."""

from __future__ import annotations

from typing import Any

from cairn.extract.statements import stated_attribute
from cairn.history.contradiction_prompts import CONTRADICTION_SCHEMA_NAME, PairDocument
from cairn.llm.heuristic import Responder, read_document
from cairn.models import canonical_content


def _answer(text: str) -> list[dict[str, Any]]:
    document = read_document(PairDocument, text)
    found: list[dict[str, Any]] = []
    for pair in document.pairs:
        attribute = stated_attribute(pair.a.content)
        if (
            attribute is not None
            and attribute == stated_attribute(pair.b.content)
            and canonical_content(pair.a.content) != canonical_content(pair.b.content)
        ):
            found.append({"pair": pair.n})
    return found


CONTRADICTION_RESPONDERS: dict[str, Responder] = {
    CONTRADICTION_SCHEMA_NAME: Responder(key="contradictions", answer=_answer)
}
