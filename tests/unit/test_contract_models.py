"""The data contract refuses what would break its invariants, at the boundary."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from cairn.changes import Create, NewRecord, RecordPatch, Revise, Vector
from cairn.models import (
    EmbedderId,
    RecordVersion,
    Scope,
    Source,
    SourceKind,
    Trust,
    content_digest,
    derive_trust,
    namespace_matches,
)
from cairn.versioning import plan_writes

T0 = datetime(2026, 3, 1, tzinfo=UTC)
SCOPE = Scope(memory_id="m1", actor_id="tg:12345")


def _record(**kwargs: object) -> NewRecord:
    fields: dict[str, object] = {
        "namespace": "/facts/tg:12345/",
        "content": "Prefers green tea",
        "sources": (Source(kind=SourceKind.USER),),
    }
    fields.update(kwargs)
    return NewRecord.model_validate(fields)


def test_trust_is_trusted_only_when_every_source_is_user_or_system() -> None:
    user, system, model = (Source(kind=k) for k in ("user", "system", "model"))
    assert derive_trust((user, system)) is Trust.TRUSTED
    assert derive_trust((user, model)) is Trust.UNTRUSTED
    assert derive_trust(()) is Trust.UNTRUSTED


def test_a_version_cannot_claim_a_trust_its_sources_do_not_give() -> None:
    version = plan_writes(SCOPE, [Create(record=_record())], {}, T0)[0].version
    data = version.model_dump()
    data["sources"] = [{"kind": "model"}]
    with pytest.raises(ValidationError, match="trust"):
        RecordVersion.model_validate(data)


def test_a_version_cannot_carry_a_digest_of_other_content() -> None:
    version = plan_writes(SCOPE, [Create(record=_record())], {}, T0)[0].version
    data = version.model_dump()
    data["content"] = "Prefers coffee"
    with pytest.raises(ValidationError, match="digest"):
        RecordVersion.model_validate(data)


def test_digest_ignores_case_and_whitespace_but_not_words() -> None:
    assert content_digest("Prefers  green tea ") == content_digest("prefers green TEA")
    assert content_digest("Prefers green tea") != content_digest("Prefers black tea")


@pytest.mark.parametrize(
    ("namespace", "prefix", "expected"),
    [
        ("/facts/a1/", "/facts/a1/", True),
        ("/facts/a1/", "/facts/a1", True),
        ("/facts/a1/sub/", "/facts/a1", True),
        ("/facts/a10/", "/facts/a1", False),
        ("/facts/a10/", "/facts/a1/", False),
        ("/facts/a1/", "/", True),
        ("/preferences/a1/", "/facts/", False),
    ],
)
def test_namespace_prefixes_match_on_segment_boundaries(
    namespace: str, prefix: str, expected: bool
) -> None:
    assert namespace_matches(namespace, prefix) is expected


def test_blank_content_and_naive_times_are_refused() -> None:
    with pytest.raises(ValidationError, match="whitespace"):
        _record(content="   ")
    with pytest.raises(ValidationError, match="timezone"):
        _record(valid_from=datetime(2026, 1, 1))


def test_ids_and_namespaces_follow_the_agentcore_patterns() -> None:
    with pytest.raises(ValidationError):
        Scope(memory_id="m1", actor_id="has space")
    with pytest.raises(ValidationError):
        _record(namespace="/facts/{actorId}/")
    assert Scope(memory_id="m1", actor_id="user/a1:b").actor_id == "user/a1:b"


def test_a_vector_must_have_the_dimensions_of_its_embedder() -> None:
    with pytest.raises(ValidationError, match="dimensions"):
        Vector(embedder=EmbedderId(model_id="m", dims=3), values=(1.0, 0.0))


def test_revision_without_a_new_vector_forgets_the_embedding_when_words_change() -> None:
    vector = Vector(embedder=EmbedderId(model_id="m", dims=2), values=(1.0, 0.0))
    head = plan_writes(SCOPE, [Create(record=_record(vector=vector))], {}, T0)[0].version
    heads = {head.record_id: head}
    same = Revise(record_id=head.record_id, patch=RecordPatch(confidence=0.9))
    changed = Revise(record_id=head.record_id, patch=RecordPatch(content="Prefers oolong"))
    assert plan_writes(SCOPE, [same], heads, T0)[0].version.embedding == vector.embedder
    assert plan_writes(SCOPE, [changed], heads, T0)[0].version.embedding is None
