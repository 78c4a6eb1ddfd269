"""The SQL that lists records: heads or as-of versions, status and namespace filters, keyset.

Kept apart from the store so the one subtle part, the namespace-prefix range, can be read (and
property-tested against ``namespace_matches``) on its own.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from cairn.models import Scope
from cairn.store.sqlite.codec import encode_time


def listing_query(
    scope: Scope,
    namespace_prefix: str | None,
    as_of: datetime | None,
    include_inactive: bool,
    after: str | None,
) -> tuple[str, list[Any]]:
    """SQL (without LIMIT) selecting the current version's JSON per record, by record id.

    The current row is aliased ``c``: a head joined to its version, or with ``as_of`` the
    newest version created at or before it (created_at never decreases along a record).
    """
    params: list[Any] = [scope.memory_id, scope.actor_id]
    if as_of is None:
        sql = (
            "SELECT v.data FROM record_heads AS c JOIN record_versions AS v"
            " USING (memory_id, actor_id, record_id, version)"
            " WHERE c.memory_id = ? AND c.actor_id = ?"
        )
    else:
        sql = (
            "SELECT c.data FROM record_versions AS c"
            " WHERE c.memory_id = ? AND c.actor_id = ? AND c.version = ("
            " SELECT MAX(w.version) FROM record_versions AS w WHERE w.memory_id = c.memory_id"
            " AND w.actor_id = c.actor_id AND w.record_id = c.record_id AND w.created_at <= ?)"
        )
        params.append(encode_time(as_of))
    # Erased records are never listed, not even with include_inactive: only their tombstones
    # are left, and those are for audit through history(), not for reading.
    sql += " AND c.status = 'active'" if not include_inactive else " AND c.status != 'erased'"
    namespace_sql, namespace_params = namespace_filter(namespace_prefix)
    sql += namespace_sql
    params += namespace_params
    if after is not None:
        sql += " AND c.record_id > ?"
        params.append(after)
    return sql + " ORDER BY c.record_id", params


def namespace_filter(prefix: str | None) -> tuple[str, list[str]]:
    """``namespace_matches`` in SQL: the namespace is the prefix, or lies under it by segment.

    "Starts with ``anchored``" (the prefix ending in ``/``) is the half-open text range
    ``[anchored, anchored[:-1] + '0')``: ``0`` is the character right after ``/``, so the range
    holds exactly the strings that continue the prefix with ``/``. No LIKE, nothing to escape.
    """
    if not prefix or prefix == "/":
        return "", []
    anchored = prefix if prefix.endswith("/") else prefix + "/"
    return (
        " AND (c.namespace IN (?, ?) OR (c.namespace >= ? AND c.namespace < ?))",
        [prefix, prefix.rstrip("/"), anchored, anchored[:-1] + "0"],
    )
