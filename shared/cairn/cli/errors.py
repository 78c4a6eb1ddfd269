"""How the ``cairn`` command reports a failure: one line, and an exit status.

Bad arguments exit 2; everything else (cairn errors, invalid values, unreadable files,
unexpected exceptions) exits 1. The line says what was wrong and what to do, and never echoes
an input value, since it may be memory content.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cairn.errors import CairnError

if TYPE_CHECKING:
    from pydantic import ValidationError

USAGE_EXIT = 2
FAILURE_EXIT = 1


class UsageError(Exception):
    """The command line itself was wrong; the message says what and where to read more."""


# The command-line spelling of the model fields a user can get wrong.
FIELD_FLAGS = {
    "actor_id": "--actor",
    "memory_id": "--memory",
    "namespace": "--namespace",
    "namespace_prefix": "--namespace",
    "content": "TEXT",
    "text": "QUERY",
    "category": "--category",
    "tags": "--tag",
    "reason": "--reason",
}


def describe_validation_error(error: ValidationError) -> str:
    """One line naming every invalid field (by its flag) and why, without echoing the input:
    it may be memory content."""
    parts = []
    for problem in error.errors(include_url=False, include_input=False):
        reason = problem["msg"].removeprefix("Value error, ")
        if problem["type"] == "string_pattern_mismatch":
            pattern = (problem.get("ctx") or {}).get("pattern", "")
            reason = f"has characters that are not allowed (it must match {pattern})"
        loc = problem["loc"]
        if not loc:  # a rule about the whole value: its message names the fields
            parts.append(reason)
            continue
        where = FIELD_FLAGS.get(str(loc[0]), ".".join(str(part) for part in loc))
        parts.append(f"{where} {reason}" if where.startswith("-") else f"{where}: {reason}")
    return "invalid input: " + "; ".join(parts) + "; fix the value and try again"


def explain(exc: Exception) -> tuple[str, int]:
    """The one line and the exit status a failure is reported with."""
    from pydantic import ValidationError  # only once something failed

    if isinstance(exc, UsageError):
        return str(exc), USAGE_EXIT
    if isinstance(exc, CairnError):
        return exc.message, FAILURE_EXIT
    if isinstance(exc, ValidationError):
        return describe_validation_error(exc), FAILURE_EXIT
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        reason = exc.strerror or type(exc).__name__
        return f"{reason}{where}; check the path and its permissions", FAILURE_EXIT
    return (
        f"unexpected {type(exc).__name__}; rerun with CAIRN_DEBUG=1 for the traceback, "
        "and please report it",
        FAILURE_EXIT,
    )
