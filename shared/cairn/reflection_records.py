"""What marks a record as a reflection of the reflection job, and which records it came from.

The reflection job (``cairn.history.reflection``) files an insight drawn from a cluster of
never-recalled records as a record of its own: strategy ``REFLECTION_STRATEGY``, category
``INSIGHT_CATEGORY``, in the namespace its members share. Its metadata remembers the exact
member versions it was made from (``MADE_FROM_KEY``: ``id@version:digest`` words, the digest
the first 16 hex digits of the version's content digest), so a rerun over an unchanged cluster
files nothing and a cluster whose members' content changed revises the reflection (a version
that changed no content, such as a contested mark or a tag, asks for no new one). Erasure reads
the same key: a reflection carries its members' content, so erasing any member erases it
(``cairn.erasure_lineage``). Not to be confused with the episodic strategy's reflections over
episodes (``cairn.extract.reflections``: strategy ``episodic``, category ``reflection``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence

from cairn.models import RecordVersion, Scope

REFLECTION_STRATEGY = "reflection"
INSIGHT_CATEGORY = "insight"
MADE_FROM_KEY = "reflection_of"


def reflection_id(scope: Scope, member_ids: Iterable[str]) -> str:
    """The record id of the first reflection on exactly these members: derived, so two runs
    reflecting on one cluster at once file one record (the second ``Create`` is refused), and a
    reflection someone erased or retracted is not filed again for the same members."""
    key = "\n".join([str(scope), REFLECTION_STRATEGY, *sorted(member_ids)])
    return "mem-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:40]


def is_reflection(version: RecordVersion) -> bool:
    return version.strategy == REFLECTION_STRATEGY


DIGEST_CHARS = 16


def made_from(version: RecordVersion) -> dict[str, tuple[int, str]]:
    """The member versions a reflection was made from, each id to (version, digest prefix);
    empty for any other record."""
    if not is_reflection(version):
        return {}
    found: dict[str, tuple[int, str]] = {}
    for word in version.metadata.get(MADE_FROM_KEY, "").split():
        record_id, _, ref = word.rpartition("@")
        number, _, digest = ref.partition(":")
        if record_id and number.isdigit():
            found[record_id] = (int(number), digest)
    return found


def member_ref(member: RecordVersion) -> tuple[int, str]:
    """What a reflection remembers of one member version."""
    return (member.version, member.content_digest[:DIGEST_CHARS])


def made_from_value(members: Sequence[RecordVersion]) -> str:
    """``MADE_FROM_KEY``'s value for these member versions, in record-id order."""
    refs = sorted((m.record_id, *member_ref(m)) for m in members)
    return " ".join(f"{record_id}@{version}:{digest}" for record_id, version, digest in refs)


def same_content(made: Mapping[str, tuple[int, str]], members: Sequence[RecordVersion]) -> bool:
    """Whether a reflection made from ``made`` was made from these members, as they read now
    (the same records, each with the same content)."""
    now = {m.record_id: member_ref(m)[1] for m in members}
    return {record_id: digest for record_id, (_, digest) in made.items()} == now
