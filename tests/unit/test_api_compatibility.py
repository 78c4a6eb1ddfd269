"""docs/agentcore-compatibility.md cannot drift from the code.

The table in the document is ``cairn.api.compatibility.render_table()``; every served
operation has a row; every field named exists in the wire model; every field the API refuses
is listed as not supported. After changing ``ROWS``, rewrite the document's table with:

    .venv/bin/python -m tests.unit.test_api_compatibility
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from cairn.api.compatibility import ROWS, Support, render_table
from cairn.api.compatibility_proofs import PROOFS
from cairn.api.operations import HANDLERS
from cairn.api.operations.memories import UNSUPPORTED_MEMORY_FIELDS
from cairn.api.routes import (
    CONTROL_PLANE,
    CONTROL_PLANE_OPERATIONS,
    DATA_PLANE,
    DATA_PLANE_OPERATIONS,
)
from cairn.api.shapes import Service, load_service

DOC = Path(__file__).resolve().parents[2] / "docs" / "agentcore-compatibility.md"
BEGIN = "<!-- compatibility-table:begin (generated from cairn.api.compatibility) -->\n"
END = "<!-- compatibility-table:end -->\n"


def _service(operation: str) -> Service:
    return load_service(DATA_PLANE if operation in DATA_PLANE_OPERATIONS else CONTROL_PLANE)


def _member_exists(service: Service, shape_name: str, path: list[str]) -> bool:
    shape: dict[str, Any] = service.shape(shape_name)
    while shape["type"] in ("list", "map"):
        shape_name = shape["member" if shape["type"] == "list" else "value"]["shape"]
        shape = service.shape(shape_name)
    if not path:
        return True
    member = shape.get("members", {}).get(path[0])
    return member is not None and _member_exists(service, member["shape"], path[1:])


def test_every_served_operation_has_a_row() -> None:
    described = {row.operation for row in ROWS if not row.field}

    assert described == set(DATA_PLANE_OPERATIONS) | set(CONTROL_PLANE_OPERATIONS) == set(HANDLERS)


@pytest.mark.parametrize(
    "row", [r for r in ROWS if r.field], ids=lambda r: f"{r.operation}.{r.field}"
)
def test_every_field_named_is_in_the_wire_model(row: Any) -> None:
    service = _service(row.operation)
    input_shape = service.operations[row.operation].input_shape

    assert _member_exists(service, input_shape, row.field.split("."))


def test_every_refused_field_is_listed_as_not_supported() -> None:
    refused = {("CreateMemory", field) for field in UNSUPPORTED_MEMORY_FIELDS}
    not_supported = {(r.operation, r.field) for r in ROWS if r.support is Support.NOT_SUPPORTED}

    assert refused <= not_supported


def test_every_row_names_the_test_that_proves_it() -> None:
    keys = {(r.operation, r.field) for r in ROWS}
    assert set(PROOFS) == keys
    root = Path(__file__).resolve().parents[2]
    for key, proof in PROOFS.items():
        if proof is None:
            continue
        path, name = proof.split("::")
        source = (root / path).read_text(encoding="utf-8")
        assert re.search(rf"^def {re.escape(name)}\(", source, re.MULTILINE), (key, proof)


def _document_table(text: str) -> str:
    assert BEGIN in text, f"{DOC} lost its table's begin marker"
    assert END in text, f"{DOC} lost its table's end marker"
    return text.split(BEGIN, 1)[1].split(END, 1)[0]


def test_the_document_shows_the_table() -> None:
    assert _document_table(DOC.read_text(encoding="utf-8")) == render_table(), (
        "docs/agentcore-compatibility.md is out of date; rewrite its table with "
        "`python -m tests.unit.test_api_compatibility`"
    )


if __name__ == "__main__":
    text = DOC.read_text(encoding="utf-8")
    before, rest = text.split(BEGIN, 1)
    after = rest.split(END, 1)[1]
    DOC.write_text(before + BEGIN + render_table() + END + after, encoding="utf-8")
