"""The vendored AgentCore service models are exactly botocore's, trimmed to the memory operations.

``cairn/api/shapes/*.json`` are generated from the botocore data files this test finds installed
(botocore 1.44.8 when they were written). If this test fails after a botocore upgrade, regenerate
them and review the diff (new members, tightened limits):

    .venv/bin/python -m tests.unit.test_api_service_model
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from cairn.api.shapes import SERVICE_FILES, load_service

# What a validator or router needs from a shape; documentation and examples are dropped.
_SHAPE_KEYS = (
    "type",
    "required",
    "members",
    "member",
    "key",
    "value",
    "min",
    "max",
    "pattern",
    "enum",
    "union",
    "document",
    "timestampFormat",
    "error",
    "exception",
    "fault",
)
_MEMBER_KEYS = ("shape", "location", "locationName", "idempotencyToken", "jsonvalue")


def _botocore_model(service: str) -> dict[str, Any]:
    botocore = pytest.importorskip("botocore")
    folder = Path(botocore.__file__).parent / "data" / service
    (path,) = sorted(folder.glob("*/service-2.json*"))
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        model: dict[str, Any] = json.load(handle)
    return model


def _shape_names(shape: dict[str, Any]) -> list[str]:
    names = [m["shape"] for m in shape.get("members", {}).values()]
    names += [shape[k]["shape"] for k in ("member", "key", "value") if k in shape]
    return names


def trimmed_model(service: str, operations: tuple[str, ...]) -> dict[str, Any]:
    """botocore's model of ``service`` reduced to ``operations`` and the shapes they reach."""
    model = _botocore_model(service)
    ops: dict[str, Any] = {}
    pending: list[str] = []
    for name in operations:
        op = model["operations"][name]
        ops[name] = {key: op[key] for key in ("http", "input", "output") if key in op}
        ops[name]["errors"] = [error["shape"] for error in op.get("errors", [])]
        pending += [op["input"]["shape"], op["output"]["shape"], *ops[name]["errors"]]
    shapes: dict[str, Any] = {}
    while pending:
        name = pending.pop()
        if name in shapes:
            continue
        source = model["shapes"][name]
        shape = {key: source[key] for key in _SHAPE_KEYS if key in source}
        if "members" in shape:
            shape["members"] = {
                member: {k: spec[k] for k in _MEMBER_KEYS if k in spec}
                for member, spec in source["members"].items()
            }
        for part in ("member", "key", "value"):
            if part in shape:
                shape[part] = {"shape": source[part]["shape"]}
        shapes[name] = shape
        pending += _shape_names(shape)
    metadata = {key: model["metadata"][key] for key in sorted(model["metadata"])}
    return {"metadata": metadata, "operations": ops, "shapes": dict(sorted(shapes.items()))}


@pytest.mark.parametrize("service", sorted(SERVICE_FILES))
def test_vendored_model_matches_the_installed_botocore(service: str) -> None:
    vendored = load_service(service)
    expected = trimmed_model(service, tuple(vendored.raw["operations"]))
    assert vendored.raw == expected, (
        f"cairn/api/shapes/{SERVICE_FILES[service]} drifted from botocore; regenerate it with "
        "`python -m tests.unit.test_api_service_model` and review the diff"
    )


def _write_vendored_models() -> None:
    from cairn.api.routes import CONTROL_PLANE_OPERATIONS, DATA_PLANE_OPERATIONS

    folder = Path(__file__).resolve().parents[2] / "shared" / "cairn" / "api" / "shapes"
    for service, operations in (
        ("bedrock-agentcore", DATA_PLANE_OPERATIONS),
        ("bedrock-agentcore-control", CONTROL_PLANE_OPERATIONS),
    ):
        text = json.dumps(trimmed_model(service, operations), indent=1, sort_keys=False)
        (folder / SERVICE_FILES[service]).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    _write_vendored_models()
