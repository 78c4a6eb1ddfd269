"""The AgentCore wire model, vendored from botocore, and a validator that enforces all of it.

botocore checks only required members, types and minima on the client (reference §1); the server
must enforce maxima, patterns and enums. Rather than restate hundreds of limits by hand, cairn
ships botocore's own service models trimmed to the memory operations (``shapes/*.json``,
regenerated and drift-checked by ``tests/unit/test_api_service_model.py``) and walks them here.

Rules beyond the model's letter, each chosen to be safe for real clients:
- Patterns must match the whole value (the service's patterns are written as full matches).
- Unknown members are ignored, not refused: a newer botocore may send members this model lacks.
- A union needs exactly one member set; ``null`` counts as unset.
- Timestamps are JSON numbers of epoch seconds within years 1-9999; floats must be finite.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

SERVICE_FILES = {
    "bedrock-agentcore": "data_plane.json",
    "bedrock-agentcore-control": "control_plane.json",
}

# datetime's range, years 1..9999, in epoch seconds: anything outside cannot be represented.
MIN_EPOCH_SECONDS = -62_135_596_800.0
MAX_EPOCH_SECONDS = 253_402_300_799.0
_MAX_PROBLEMS = 20


@dataclass(frozen=True, slots=True)
class Problem:
    """One way a request breaks the model: where (a dotted path) and which rule."""

    path: str
    message: str


@dataclass(frozen=True)
class Operation:
    name: str
    method: str
    request_uri: str
    success_status: int
    input_shape: str
    output_shape: str | None
    errors: tuple[str, ...]


@dataclass(frozen=True)
class Service:
    """One vendored service model: its operations and shapes, with patterns compiled once."""

    name: str
    raw: dict[str, Any]
    operations: dict[str, Operation] = field(init=False)
    _patterns: dict[str, re.Pattern[str]] = field(init=False)

    def __post_init__(self) -> None:
        ops = {}
        for name, op in self.raw["operations"].items():
            ops[name] = Operation(
                name=name,
                method=op["http"]["method"],
                request_uri=op["http"]["requestUri"],
                success_status=int(op["http"].get("responseCode", 200)),
                input_shape=op["input"]["shape"],
                output_shape=op.get("output", {}).get("shape"),
                errors=tuple(op["errors"]),
            )
        patterns = {
            name: re.compile(shape["pattern"], re.DOTALL)
            for name, shape in self.raw["shapes"].items()
            if "pattern" in shape
        }
        object.__setattr__(self, "operations", ops)
        object.__setattr__(self, "_patterns", patterns)

    def shape(self, name: str) -> dict[str, Any]:
        found: dict[str, Any] = self.raw["shapes"][name]
        return found

    def members(self, shape_name: str) -> dict[str, dict[str, Any]]:
        """The members of a structure shape, by wire name."""
        found: dict[str, dict[str, Any]] = self.shape(shape_name).get("members", {})
        return found

    def validate(self, shape_name: str, value: Any) -> list[Problem]:
        """Every problem with ``value`` as an instance of the shape (the first 20 found)."""
        problems: list[Problem] = []
        for problem in self._check(shape_name, value, ""):
            problems.append(problem)
            if len(problems) >= _MAX_PROBLEMS:
                break
        return problems

    def _check(self, name: str, value: Any, path: str) -> Iterator[Problem]:
        shape = self.shape(name)
        kind = shape["type"]
        if kind == "structure" and shape.get("document"):
            return  # a free JSON document: any JSON value is valid
        checker = _CHECKERS.get(kind)
        if checker is None:
            yield Problem(path or "(body)", f"has a type ({kind}) this server does not accept")
            return
        yield from checker(self, name, shape, value, path)

    def pattern_matches(self, name: str, value: str) -> bool:
        pattern = self._patterns.get(name)
        return pattern is None or pattern.fullmatch(value) is not None


def _join(path: str, member: str) -> str:
    return f"{path}.{member}" if path else member


def _check_structure(
    service: Service, name: str, shape: dict[str, Any], value: Any, path: str
) -> Iterator[Problem]:
    if not isinstance(value, Mapping):
        yield Problem(path or "(body)", "must be a JSON object")
        return
    members: dict[str, dict[str, Any]] = shape.get("members", {})
    present = [m for m in members if value.get(m) is not None]
    if shape.get("union") and len(present) != 1:
        choices = ", ".join(members)
        yield Problem(path or "(body)", f"must set exactly one of: {choices}")
    for required in shape.get("required", []):
        if value.get(required) is None:
            yield Problem(_join(path, required), "is required")
    for member in present:
        yield from service._check(members[member]["shape"], value[member], _join(path, member))


def _check_list(
    service: Service, name: str, shape: dict[str, Any], value: Any, path: str
) -> Iterator[Problem]:
    if not isinstance(value, list):
        yield Problem(path, "must be a JSON array")
        return
    yield from _check_size(shape, len(value), path, "items")
    for index, item in enumerate(value):
        yield from service._check(shape["member"]["shape"], item, f"{path}[{index}]")


def _check_map(
    service: Service, name: str, shape: dict[str, Any], value: Any, path: str
) -> Iterator[Problem]:
    if not isinstance(value, Mapping):
        yield Problem(path, "must be a JSON object")
        return
    yield from _check_size(shape, len(value), path, "entries")
    for key, item in value.items():
        yield from service._check(shape["key"]["shape"], key, f"{path} key")
        yield from service._check(shape["value"]["shape"], item, f"{path}.{key}")


def _check_string(
    service: Service, name: str, shape: dict[str, Any], value: Any, path: str
) -> Iterator[Problem]:
    if not isinstance(value, str):
        yield Problem(path, "must be a string")
        return
    yield from _check_size(shape, len(value), path, "characters")
    if "enum" in shape and value not in shape["enum"]:
        yield Problem(path, "must be one of: " + ", ".join(shape["enum"]))
    elif not service.pattern_matches(name, value):
        yield Problem(path, f"must match the pattern {shape['pattern']}")


def _check_integer(
    service: Service, name: str, shape: dict[str, Any], value: Any, path: str
) -> Iterator[Problem]:
    if isinstance(value, bool) or not isinstance(value, int):
        yield Problem(path, "must be an integer")
        return
    yield from _check_range(shape, value, path)


def _check_number(
    service: Service, name: str, shape: dict[str, Any], value: Any, path: str
) -> Iterator[Problem]:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        yield Problem(path, "must be a finite number")
        return
    yield from _check_range(shape, value, path)


def _check_boolean(
    service: Service, name: str, shape: dict[str, Any], value: Any, path: str
) -> Iterator[Problem]:
    if not isinstance(value, bool):
        yield Problem(path, "must be true or false")


def _check_timestamp(
    service: Service, name: str, shape: dict[str, Any], value: Any, path: str
) -> Iterator[Problem]:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        yield Problem(path, "must be a timestamp in epoch seconds (a JSON number)")
    elif not MIN_EPOCH_SECONDS <= value <= MAX_EPOCH_SECONDS:
        yield Problem(path, "must be an epoch-seconds timestamp within years 1 to 9999")


def _check_size(shape: dict[str, Any], size: int, path: str, unit: str) -> Iterator[Problem]:
    if "min" in shape and size < shape["min"]:
        yield Problem(path, f"must have at least {shape['min']} {unit}")
    if "max" in shape and size > shape["max"]:
        yield Problem(path, f"must have at most {shape['max']} {unit}")


def _check_range(shape: dict[str, Any], value: float, path: str) -> Iterator[Problem]:
    if "min" in shape and value < shape["min"]:
        yield Problem(path, f"must be at least {shape['min']}")
    if "max" in shape and value > shape["max"]:
        yield Problem(path, f"must be at most {shape['max']}")


_CHECKERS = {
    "structure": _check_structure,
    "list": _check_list,
    "map": _check_map,
    "string": _check_string,
    "integer": _check_integer,
    "long": _check_integer,
    "double": _check_number,
    "float": _check_number,
    "boolean": _check_boolean,
    "timestamp": _check_timestamp,
}


@cache
def load_service(name: str) -> Service:
    """The vendored model of ``bedrock-agentcore`` or ``bedrock-agentcore-control``."""
    text = resources.files("cairn.api").joinpath("shapes", SERVICE_FILES[name]).read_text("utf-8")
    return Service(name=name, raw=json.loads(text))
