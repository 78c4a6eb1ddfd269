"""Principals: which actors, namespaces and operations each caller of the API may touch.

A principals document (``cairn serve --principals FILE``, JSON or TOML; on AWS the
``CAIRN_PRINCIPALS`` variable of the API function) lists each principal once::

    [[principal]]
    name = "alice-app"
    token_sha256 = "<64 hex: sha256 of the token>"   # cairn serve: the token's hash, never it
    # iam_arn = "arn:aws:sts::123456789012:assumed-role/alice-app/*"  # on AWS: the caller ARN
    actors = ["alice", "tenant-1:*"]                 # exact ids, or a prefix ending in *
    namespaces = ["/shared/"]                        # record namespace prefixes, optional
    access = ["read", "write"]                       # and/or "control"

A principal touches an actor's events and sessions when an ``actors`` entry matches the actor
id, and a record when it matches the record's actor or the record's namespace lies under one
of ``namespaces`` (segment boundaries). ``read`` and ``write`` are the data plane's reads and
writes; ``control`` is CreateMemory, UpdateMemory and DeleteMemory (which erases every actor);
GetMemory and ListMemories need any access. ``cairn.api.guard`` applies it to each request.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from cairn.errors import ConfigurationError
from cairn.models import namespace_matches


class Access(StrEnum):
    READ = "read"
    WRITE = "write"
    CONTROL = "control"


class PrincipalEntry(BaseModel):
    """One principal as the document gives it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, max_length=128)
    token_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    iam_arn: str | None = Field(default=None, pattern=r"^arn:aws[a-z-]*:(iam|sts)::[^*]+\*?$")
    actors: tuple[str, ...] = Field(default=(), max_length=1000)
    namespaces: tuple[str, ...] = Field(default=(), max_length=1000)
    access: tuple[Access, ...] = Field(default=(Access.READ, Access.WRITE), min_length=1)

    @model_validator(mode="after")
    def _whole(self) -> Self:
        if (self.token_sha256 is None) == (self.iam_arn is None):
            raise ValueError("give exactly one of token_sha256 and iam_arn")
        for actor in self.actors:
            if not actor or ("*" in actor and not (actor == "*" or actor.endswith("*"))):
                raise ValueError(
                    f"actors: {actor!r} is neither an actor id nor a prefix ending in one *"
                )
            if actor.count("*") > 1:
                raise ValueError(f"actors: {actor!r} has more than one *")
        for namespace in self.namespaces:
            if not namespace.startswith("/") or "*" in namespace:
                raise ValueError(
                    f"namespaces: {namespace!r} must be a namespace prefix starting with / "
                    "(no wildcards)"
                )
        has_data = Access.READ in self.access or Access.WRITE in self.access
        if has_data and not self.actors and not self.namespaces:
            raise ValueError(
                "read or write access needs actors or namespaces to touch "
                '(actors = ["*"] for every actor)'
            )
        return self


class PrincipalsDocument(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    principal: tuple[PrincipalEntry, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> Self:
        for label, values in (
            ("name", [p.name for p in self.principal]),
            ("token_sha256", [p.token_sha256 for p in self.principal if p.token_sha256]),
            ("iam_arn", [p.iam_arn for p in self.principal if p.iam_arn]),
        ):
            repeated = sorted({v for v in values if values.count(v) > 1})
            if repeated:
                raise ValueError(f"two principals share the {label} {repeated[0]!r}")
        return self


def _matches(pattern: str, value: str) -> bool:
    if pattern.endswith("*"):
        return value.startswith(pattern[:-1])
    return value == pattern


@dataclass(frozen=True)
class Principal:
    """A caller the document names, and what it may touch."""

    name: str
    actors: tuple[str, ...]
    namespaces: tuple[str, ...]
    access: frozenset[Access]

    def may(self, access: Access) -> bool:
        return access in self.access

    def may_touch_actor(self, actor_id: str) -> bool:
        """Whether the actor's events, sessions and records are this principal's."""
        return any(_matches(pattern, actor_id) for pattern in self.actors)

    def may_touch_record(self, actor_id: str, namespace: str) -> bool:
        """Whether a record of ``actor_id`` filed in ``namespace`` is this principal's."""
        return self.may_touch_actor(actor_id) or any(
            namespace_matches(namespace, prefix) for prefix in self.namespaces
        )


def token_digest(token: str) -> str:
    """The hex SHA-256 of a token, as ``token_sha256`` holds it."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Principals:
    """Every principal of a document, found by token digest or by caller ARN."""

    by_digest: dict[str, Principal]
    by_arn: tuple[tuple[str, Principal], ...]

    def for_token(self, token: str) -> Principal | None:
        return self.by_digest.get(token_digest(token))

    def for_arn(self, arn: str) -> Principal | None:
        """The principal of an IAM caller ARN: an exact entry first, else the longest pattern."""
        exact = [p for pattern, p in self.by_arn if pattern == arn]
        if exact:
            return exact[0]
        found = sorted(
            ((len(pattern), p) for pattern, p in self.by_arn if _matches(pattern, arn)),
            key=lambda row: -row[0],
        )
        return found[0][1] if found else None


def _principal(entry: PrincipalEntry) -> Principal:
    return Principal(
        name=entry.name,
        actors=entry.actors,
        namespaces=entry.namespaces,
        access=frozenset(entry.access),
    )


def _problem(error: Any) -> str:
    where = ".".join(str(part) for part in error["loc"]) or "(document)"
    if error["type"] == "extra_forbidden" and error["loc"][-1] == "token":
        return f"{where}: give token_sha256, the token's SHA-256 in hex, never the token itself"
    return f"{where}: {str(error['msg']).removeprefix('Value error, ')}"


def principals_from(data: Any, source: str) -> Principals:
    """The principals of a parsed document; ``ConfigurationError`` naming ``source`` else."""
    try:
        document = PrincipalsDocument.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        # A tuple whose items failed is also reported too short: say only what failed.
        errors = [e for e in errors if e["type"] != "too_short"] or errors
        problems = "; ".join(_problem(error) for error in errors[:5])
        raise ConfigurationError(
            f"the principals document {source} is not valid: {problems} "
            "(docs/security.md, 'Principals on the API', shows the format)"
        ) from None
    return Principals(
        by_digest={p.token_sha256: _principal(p) for p in document.principal if p.token_sha256},
        by_arn=tuple((p.iam_arn, _principal(p)) for p in document.principal if p.iam_arn),
    )


def parse_principals(text: str, source: str, *, toml: bool) -> Principals:
    """Principals from a JSON or TOML document's text."""
    try:
        data: Any = tomllib.loads(text) if toml else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        kind = "TOML" if toml else "JSON"
        raise ConfigurationError(
            f"the principals document {source} is not valid {kind}: {exc}"
        ) from None
    return principals_from(data, source)


def load_principals(path: Path) -> Principals:
    """The principals file at ``path`` (``.toml`` is TOML, anything else JSON)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(
            f"cannot read the principals file {path} ({exc}); pass a JSON or TOML file"
        ) from None
    return parse_principals(text, str(path), toml=path.suffix.lower() == ".toml")
