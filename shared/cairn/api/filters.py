"""Metadata filters of ListEvents and of Retrieve/ListMemoryRecords: checked, then evaluated.

Filters are AND-ed. A record or event whose value has another type than the filter's never
matches. Operators take the value types AgentCore documents; any other pairing is refused:

    EQUALS_TO                       any value (same type and equal)
    EXISTS / NOT_EXISTS             no value
    CONTAINS                        a string (substring of a string, member of a string list)
                                    or a string list (every member in a string list)
    BEFORE / AFTER                  dateTimeValue
    GREATER_THAN[_OR_EQUALS] ...    numberValue
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cairn.api.errors import ApiError

Filter = Mapping[str, Any]

_ORDERED: dict[str, tuple[str, Callable[[Any, Any], bool]]] = {
    "BEFORE": ("dateTimeValue", operator.lt),
    "AFTER": ("dateTimeValue", operator.gt),
    "GREATER_THAN": ("numberValue", operator.gt),
    "GREATER_THAN_OR_EQUALS": ("numberValue", operator.ge),
    "LESS_THAN": ("numberValue", operator.lt),
    "LESS_THAN_OR_EQUALS": ("numberValue", operator.le),
}


def _right(expression: Filter) -> dict[str, Any] | None:
    right = expression.get("right") or {}
    value: dict[str, Any] | None = right.get("metadataValue")
    return value


def check_filters(filters: Sequence[Filter], field: str) -> None:
    """Refuse a filter whose operator and value do not go together (ValidationException)."""
    for index, expression in enumerate(filters):
        where = f"{field}[{index}]"
        op = expression["operator"]
        value = _right(expression)
        if op in ("EXISTS", "NOT_EXISTS"):
            if value is not None:
                raise ApiError.validation(f"{where}: {op} takes no right value", field=where)
        elif value is None:
            raise ApiError.validation(f"{where}: {op} needs a right metadataValue", field=where)
        elif op in _ORDERED and _ORDERED[op][0] not in value:
            needed = _ORDERED[op][0]
            raise ApiError.validation(f"{where}: {op} compares a {needed}", field=where)
        elif op == "CONTAINS" and not {"stringValue", "stringListValue"} & set(value):
            raise ApiError.validation(
                f"{where}: CONTAINS takes a stringValue or stringListValue", field=where
            )


def _contains(have: Mapping[str, Any], want: Mapping[str, Any]) -> bool:
    if "stringListValue" in have:
        members = set(have["stringListValue"])
        if "stringValue" in want:
            return bool(want["stringValue"] in members)
        return set(want.get("stringListValue", ())) <= members
    if "stringValue" in have and "stringValue" in want:
        return bool(want["stringValue"] in have["stringValue"])
    return False


def _one(metadata: Mapping[str, Any], expression: Filter) -> bool:
    key = expression["left"]["metadataKey"]
    op = expression["operator"]
    have = metadata.get(key)
    if op == "EXISTS":
        return have is not None
    if op == "NOT_EXISTS":
        return have is None
    want = _right(expression) or {}
    if have is None:
        return False
    if op == "EQUALS_TO":
        return bool(have == want)
    if op == "CONTAINS":
        return _contains(have, want)
    kind, compare = _ORDERED[op]
    return kind in have and bool(compare(have[kind], want[kind]))


def matches(metadata: Mapping[str, Any], filters: Sequence[Filter] | None) -> bool:
    """True when the typed wire metadata satisfies every filter."""
    return all(_one(metadata, expression) for expression in filters or ())
