"""The principals document (``cairn.api.principals``): bad documents are refused with a message
that says what is wrong, and every served operation has an access level (``cairn.api.guard``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cairn.api.errors import ApiError
from cairn.api.guard import OPERATION_ACCESS, admit
from cairn.api.operations import HANDLERS
from cairn.api.principals import Access, load_principals, principals_from, token_digest
from cairn.errors import ConfigurationError

DIGEST = token_digest("secret")


def _one(**entry: Any) -> dict[str, Any]:
    return {"principal": [{"name": "p", **entry}]}


@pytest.mark.parametrize(
    ("document", "says"),
    [
        ({"principal": []}, "principal"),
        (_one(actors=["a"]), "exactly one of token_sha256 and iam_arn"),
        (_one(token_sha256=DIGEST, iam_arn="arn:aws:iam::1:user/x", actors=["a"]), "exactly one"),
        (_one(token_sha256="not-hex", actors=["a"]), "token_sha256"),  # noqa: S106
        (_one(token_sha256=DIGEST, actors=["a*b"]), "prefix ending in one *"),
        (_one(token_sha256=DIGEST, actors=["a", "**"]), "more than one *"),
        (_one(token_sha256=DIGEST, namespaces=["facts/"]), "starting with /"),
        (_one(token_sha256=DIGEST), "needs actors or namespaces"),
        (_one(token_sha256=DIGEST, actors=["a"], access=["admin"]), "access"),
        (_one(token_sha256=DIGEST, actors=["a"], token="plain"), "token"),  # noqa: S106
        (
            {
                "principal": [
                    {"name": "p", "token_sha256": DIGEST, "actors": ["a"]},
                    {"name": "q", "token_sha256": DIGEST, "actors": ["b"]},
                ]
            },
            "two principals share the token_sha256",
        ),
    ],
)
def test_a_bad_document_is_refused_saying_what_is_wrong(document: Any, says: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        principals_from(document, "principals.json")
    assert says in caught.value.message
    assert "principals.json" in caught.value.message


def test_files_are_read_as_toml_or_json_and_bad_syntax_is_named(tmp_path: Path) -> None:
    toml = tmp_path / "p.toml"
    toml.write_text(f'[[principal]]\nname = "p"\ntoken_sha256 = "{DIGEST}"\nactors = ["a"]\n')
    found = load_principals(toml).for_token("secret")
    assert found is not None
    assert found.may_touch_actor("a")
    assert not found.may_touch_actor("a/x")
    bad = tmp_path / "p.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigurationError, match="not valid JSON"):
        load_principals(bad)
    with pytest.raises(ConfigurationError, match="cannot read"):
        load_principals(tmp_path / "missing.json")


def test_caller_arns_match_exactly_or_by_a_trailing_star_the_longest_first() -> None:
    principals = principals_from(
        {
            "principal": [
                {"name": "any", "iam_arn": "arn:aws:sts::1:assumed-role/*", "actors": ["x"]},
                {"name": "app", "iam_arn": "arn:aws:sts::1:assumed-role/app/*", "actors": ["a"]},
            ]
        },
        "doc",
    )
    assert principals.for_arn("arn:aws:sts::1:assumed-role/app/s1").name == "app"  # type: ignore[union-attr]
    assert principals.for_arn("arn:aws:sts::1:assumed-role/other/s1").name == "any"  # type: ignore[union-attr]
    assert principals.for_arn("arn:aws:iam::1:user/app") is None
    assert principals.for_token("secret") is None


def test_every_served_operation_has_an_access_level_and_actor_checks_read_only_the_document() -> (
    None
):
    assert set(HANDLERS) == set(OPERATION_ACCESS)
    reader = principals_from(
        _one(token_sha256=DIGEST, actors=["a"], access=["read"]), "doc"
    ).for_token("secret")
    assert reader is not None
    admit(reader, "ListEvents", {"actorId": "a"})
    admit(reader, "GetMemory", {})
    for operation, params in (
        ("ListEvents", {"actorId": "b"}),
        ("CreateEvent", {"actorId": "a"}),
        ("DeleteMemory", {}),
    ):
        with pytest.raises(ApiError) as caught:
            admit(reader, operation, params)
        assert caught.value.status == 403
    assert Access.CONTROL not in reader.access
    assert json.dumps(sorted(a.value for a in Access)) == '["control", "read", "write"]'
