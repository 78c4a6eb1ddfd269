"""Whose memory a namespace is: the exact, injective namespace <-> actor mapping.

AgentCore's record API carries no actor, cairn's scopes are per actor, and the ``{actorId}``
in a strategy's namespace template bridges the two. An actor id may contain ``/`` (``u1/x``),
so the mapping is resolved segment by segment, never by string prefix:

- a namespace is filled from a template exactly: one trailing ``/`` is optional, no other
  slash is dropped, so ``/facts/u1//`` is actor ``u1/``'s and never ``u1``'s;
- a namespace two templates (or two readings of one template) would file under different
  actors is refused at write time (``AmbiguousNamespaceError``), as is one that names the
  reserved actor ``cairn:shared``;
- a read prefix that stops inside an actor id (``/facts/u1/`` against actor ``u1/x``) names
  another actor and never reads that one (``prefix_reads_actor``);
- a namespace that lies under (or is) another actor's whole namespace is refused at write
  time (``refuse_nested_namespace``): with a template that puts segments after ``{actorId}``
  (``/mem/{actorId}/facts/``), actor ``u1/facts``'s ``/mem/u1/facts/facts/`` would be read by
  every read of actor ``u1``'s ``/mem/u1/facts/``, so ``u1/facts`` may not file there.

``tests/unit/test_namespace_actors.py`` and ``tests/compat/test_actor_isolation.py`` pin it.
"""

from __future__ import annotations

import re

from cairn.errors import InvalidInputError
from cairn.memories import MemoryConfig, StrategyConfig
from cairn.models import ACTOR_ID_PATTERN, SESSION_ID_PATTERN

# The scope of records whose namespace names no actor; never a caller's actor id.
SHARED_ACTOR_ID = "cairn:shared"
RESERVED_ACTOR_PREFIX = "cairn:"
MAX_ACTOR_CHARS = 255

_VARIABLE = re.compile(r"\{([a-zA-Z][a-zA-Z0-9]*)\}")
# The values a template variable can take when it is filled: only an actor id spans segments.
_SESSION = SESSION_ID_PATTERN.strip("^$")
_ACTOR = ACTOR_ID_PATTERN.strip("^$")
_OTHER_VALUE = r"[a-zA-Z0-9][a-zA-Z0-9\-_]*"


class AmbiguousNamespaceError(InvalidInputError):
    """A namespace that the memory's templates would file under more than one actor, or under
    a reserved one; nothing was written."""


def refuse_reserved_actor(actor_id: str) -> None:
    """Refuse a caller's actor id in cairn's reserved space (``cairn:...``), so no user can
    read or write the memory-wide scope of records whose namespace names no actor."""
    if actor_id.startswith(RESERVED_ACTOR_PREFIX):
        raise InvalidInputError(
            f"actorId {actor_id!r} is reserved: ids starting with {RESERVED_ACTOR_PREFIX!r} "
            "name cairn's own scopes; choose another actor id"
        )


def _trimmed(text: str) -> str:
    """``text`` without one trailing slash: the only slash a namespace may drop."""
    return text[:-1] if text.endswith("/") and len(text) > 1 else text


def _lazy(pattern: str) -> str:
    return pattern.replace("*", "*?").replace("+", "+?")


def _template_regex(
    template: str, strategy_id: str, *, greedy: bool = True
) -> re.Pattern[str] | None:
    """A regex matching namespaces filled from ``template``, capturing ``actor``; ``None``
    when the template has no ``{actorId}``. ``greedy`` picks the longest actor id a namespace
    allows, else the shortest: two different answers mean two readings."""
    if "{actorId}" not in template:
        return None
    actor = _ACTOR if greedy else _lazy(_ACTOR)
    other = _lazy(_OTHER_VALUE) if greedy else _OTHER_VALUE
    session = _lazy(_SESSION) if greedy else _SESSION
    parts: list[str] = []
    position = 0
    actor_seen = False
    stripped = _trimmed(template)
    for found in _VARIABLE.finditer(stripped):
        parts.append(re.escape(stripped[position : found.start()]))
        variable = found.group(1)
        if variable == "actorId":
            parts.append("(?P=actor)" if actor_seen else f"(?P<actor>{actor})")
            actor_seen = True
        elif variable == "sessionId":
            parts.append(session)
        elif variable == "memoryStrategyId":
            parts.append(re.escape(strategy_id))
        else:
            parts.append(other)
        position = found.end()
    parts.append(re.escape(stripped[position:]))
    return re.compile("".join(parts))


def _templates(memory: MemoryConfig) -> list[tuple[StrategyConfig, str]]:
    return [(strategy, t) for strategy in memory.strategies for t in strategy.templates]


def _tried(memory: MemoryConfig, strategy_id: str | None) -> tuple[StrategyConfig, ...]:
    named = memory.strategy(strategy_id) if strategy_id else None
    return (named,) if named else memory.strategies


def _readings(strategy: StrategyConfig, namespace: str, template: str | None = None) -> set[str]:
    """The actors ``namespace`` names through ``template`` (every template of the strategy,
    an episodic strategy's reflection template included, when ``None``)."""
    found: set[str] = set()
    for filled in (template,) if template is not None else strategy.templates:
        for greedy in (True, False):
            pattern = _template_regex(filled, strategy.strategy_id, greedy=greedy)
            match = pattern.fullmatch(_trimmed(namespace)) if pattern else None
            if match is not None and len(match.group("actor")) <= MAX_ACTOR_CHARS:
                found.add(match.group("actor"))
    return found


def actor_of(memory: MemoryConfig, namespace: str, strategy_id: str | None = None) -> str | None:
    """The one actor whose memory ``namespace`` is, read through the strategies' templates.

    Only the named strategy's template is tried when ``strategy_id`` names one of the memory's
    strategies, else every template; ``None`` when no template with ``{actorId}`` matches the
    whole namespace. ``AmbiguousNamespaceError`` when the templates read two actors out of it,
    or the reserved one.
    """
    readings: dict[str, str] = {}
    for strategy in _tried(memory, strategy_id):
        # An episodic strategy's episode template is read before its reflection template: a
        # namespace both fill is the episode actor's (the other is refused at write time).
        found = next(
            (r for t in strategy.templates if (r := _readings(strategy, namespace, t))), set()
        )
        for actor in found:
            readings.setdefault(actor, strategy.name)
    if len(readings) > 1:
        named = ", ".join(
            f"{actor!r} (strategy {name})" for actor, name in sorted(readings.items())
        )
        raise AmbiguousNamespaceError(
            f"namespace {namespace!r} names more than one actor through this memory's "
            f"templates: {named}; give memoryStrategyId, or a namespace only one template fills"
        )
    if not readings:
        return None
    (actor,) = readings
    if actor.startswith(RESERVED_ACTOR_PREFIX):
        raise AmbiguousNamespaceError(
            f"namespace {namespace!r} names the reserved actor {actor!r}; ids starting with "
            f"{RESERVED_ACTOR_PREFIX!r} are cairn's own; file the record under another actor"
        )
    return actor


def _shorter_ids(actor_id: str) -> list[str]:
    """The ids ``actor_id`` extends by whole segments: ``a/b/c`` -> ``a``, ``a/b``."""
    segments = actor_id.split("/")
    return ["/".join(segments[:count]) for count in range(1, len(segments))]


def prefix_reads_actor(memory: MemoryConfig, prefix: str, actor_id: str) -> bool:
    """False when ``prefix`` stops inside ``actor_id`` in one of the templates, naming a
    shorter id (``/facts/u1/`` against ``u1/x``): such a prefix is another actor's and reads
    none of this one's records. True otherwise, including prefixes above every actor
    (``/facts/``) and prefixes that name ``actor_id`` whole."""
    shorter = _shorter_ids(actor_id)
    if not shorter:
        return True
    stem = _trimmed(prefix)
    for strategy, template in _templates(memory):
        if "{actorId}" not in template:
            continue
        head = template[: template.index("{actorId}")] + "{actorId}"
        pattern = _template_regex(head, strategy.strategy_id)
        match = pattern.fullmatch(stem) if pattern else None
        if match is not None and match.group("actor") in shorter:
            return False
    return True


def refuse_nested_namespace(memory: MemoryConfig, namespace: str, actor_id: str) -> None:
    """``AmbiguousNamespaceError`` if a shorter namespace at one of ``namespace``'s segment
    boundaries is another actor's whole namespace through a template with segments after
    ``{actorId}``: a read of that actor's namespace would return ``actor_id``'s records."""
    stem = _trimmed(namespace)
    # Every shorter namespace at a segment boundary, and the namespace itself: another
    # template's tail may spell it whole (an episode namespace read as a reflection's).
    for cut in [i for i, char in enumerate(stem) if char == "/" and i > 0] + [len(stem)]:
        above = stem[:cut]
        for strategy, template in _templates(memory):
            if _trimmed(template).endswith("{actorId}"):
                continue  # a prefix ending at an actor id reads none of a longer id's records
            for other in _readings(strategy, above, template) - {actor_id}:
                raise AmbiguousNamespaceError(
                    f"namespace {namespace!r} of actor {actor_id!r} lies under {above + '/'!r}, "
                    f"the whole namespace of actor {other!r} (strategy {strategy.name}), so "
                    f"reads of {other!r}'s memory would return it; use an actor id whose "
                    f"segments do not spell the template's tail, or give strategy "
                    f"{strategy.name} a template that ends with {{actorId}}"
                )


def refuse_nested_actor(memory: MemoryConfig, actor_id: str, session_id: str) -> None:
    """``refuse_nested_namespace`` for every namespace the memory's templates would file this
    actor's session in (templates with variables extraction cannot fill are skipped: it
    refuses those itself)."""
    for strategy, template in _templates(memory):
        if "{actorId}" not in template:
            continue
        values = {
            "actorId": actor_id,
            "sessionId": session_id,
            "memoryStrategyId": strategy.strategy_id,
        }
        if any(name not in values for name in _VARIABLE.findall(template)):
            continue
        namespace = template
        for name, value in values.items():
            namespace = namespace.replace(f"{{{name}}}", value)
        refuse_nested_namespace(memory, namespace, actor_id)
