"""``AgentCoreSessionStore``: a session's memory over a cairn HTTP endpoint, through the real
boto3 ``bedrock-agentcore`` client (``cairn serve``, or the deployed API behind API Gateway).

Turns are ``CreateEvent`` calls (each with the turn's token as ``clientToken``, so a retried
write is not stored twice), recall is ``RetrieveMemoryRecords``, and the tools write with
``BatchCreate`` / ``BatchUpdate`` / ``BatchDeleteMemoryRecords``.

RetrieveMemoryRecords answers the top K whatever their similarity, scored by cosine, as the
service does; the relevance bar is the client's (as for the SDK's Strands session manager), so
recall keeps the hits whose score reaches ``policy.relevance_floor``, or, when none does, those
reaching ``policy.weak_floor`` (recall's own weak fallback, without its label).

The wire API names no actor on records, so over HTTP a session's scope is its memory plus the
namespaces its templates fill with the actor id (``/facts/{actorId}/`` ...): recall reads only
there, and a record id whose namespace is not exactly one of those is refused as not found
before anything is written. The wire carries no provenance, so every recalled entry is labelled
untrusted (rendered as quoted data) with confidence 0.50; the server journals its own retrievals.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from cairn.changes import NewRecord
from cairn.errors import InvalidInputError, RecordNotFoundError
from cairn.models import (
    EventInput,
    Scope,
    Source,
    Status,
    Trust,
    content_digest,
    namespace_matches,
)
from cairn.ports import Clock
from cairn.recall import RecallPolicy, RecallQuery
from cairn.recall.budget import truncate_utf8
from cairn.recall.render import CAVEAT, HEADING, BlockEntry, line_cost, render_block
from cairn.runtime.agentcore_wire import Call, check_template, event_payload, failure_of, fill
from cairn.runtime.session_store import (
    Recalled,
    RecalledHistory,
    RecalledItem,
    Written,
    as_hit,
)

DEFAULT_NAMESPACES = ("/facts/{actorId}/", "/preferences/{actorId}/", "/lessons/{actorId}/")
# Nothing on the wire says who stated a record; a confidence nobody claimed is shown as even.
UNKNOWN_CONFIDENCE = 0.5
_FRAME_WITH_ENTRIES = len(f"{HEADING}\n{CAVEAT}".encode())


class AgentCoreSessionStore:
    """The ``SessionStore`` port over a ``bedrock-agentcore`` client pointed at cairn; every
    client call goes through ``call``, which raises the client's errors as cairn errors
    (``cairn.aws.agentcore_client.call`` for a boto3 client)."""

    def __init__(
        self,
        client: Any,
        *,
        call: Call,
        clock: Clock,
        namespaces: Sequence[str] = DEFAULT_NAMESPACES,
    ) -> None:
        for template in namespaces:
            check_template(template)
        self._client = client
        self._call = call
        self._clock = clock
        self._templates = tuple(namespaces)

    @property
    def can_curate(self) -> bool:
        return True

    def namespaces(self, scope: Scope) -> tuple[str, ...]:
        """The namespaces this session may read and edit: the templates, filled for ``scope``."""
        return tuple(fill(template, scope) for template in self._templates)

    def append(self, scope: Scope, turn: EventInput, *, token: str) -> None:
        self._call(
            self._client.create_event,
            memoryId=scope.memory_id,
            actorId=scope.actor_id,
            sessionId=turn.session_id,
            eventTimestamp=turn.event_timestamp,
            payload=event_payload(turn),
            clientToken=token,
            **(
                {"metadata": {k: {"stringValue": v} for k, v in turn.metadata.items()}}
                if turn.metadata
                else {}
            ),
        )

    def append_batch(self, scope: Scope, turns: Sequence[tuple[EventInput, str]]) -> None:
        # The wire API has no batch CreateEvent: one call per turn, each under its clientToken.
        for turn, token in turns:
            self.append(scope, turn, token=token)

    def recall(
        self, scope: Scope, query: RecallQuery, policy: RecallPolicy, *, journal: bool
    ) -> Recalled:
        hits: list[tuple[float, dict[str, Any]]] = []
        for namespace in self.namespaces(scope):
            if query.namespace_prefix and not namespace_matches(namespace, query.namespace_prefix):
                continue
            answer = self._call(
                self._client.retrieve_memory_records,
                memoryId=scope.memory_id,
                namespace=namespace,
                searchCriteria={"searchQuery": query.text, "topK": query.top_k},
                maxResults=query.top_k,
            )
            hits += [
                (float(summary.get("score") or 0.0), summary)
                for summary in answer.get("memoryRecordSummaries", ())
                if self._owns(scope, summary)
            ]
        hits.sort(key=lambda hit: (-hit[0], hit[1]["memoryRecordId"]))
        hits = _above_the_bar(hits, policy)
        items = _clamped([_item(score, summary, policy) for score, summary in hits], policy)
        items = items[: query.top_k]
        return Recalled(
            block=render_block([item.entry for item in items]), items=tuple(items), journal_id=None
        )

    def recall_channels(
        self, scope: Scope, query: RecallQuery, policy: RecallPolicy, channels: frozenset[str]
    ) -> RecalledHistory:
        if channels != {"records"}:
            raise InvalidInputError(
                "turns and chunks cannot be recalled over the AgentCore API; recall with "
                "channels ['records'] here"
            )
        found = self.recall(scope, query, policy, journal=True)
        hits = tuple(map(as_hit, found.items))
        return RecalledHistory(found.block, hits, found.journal_id)

    def journal_injection(
        self, scope: Scope, query: RecallQuery, shown: Sequence[RecalledItem], policy: RecallPolicy
    ) -> str | None:
        return None  # the server journalled the retrieval this injection was chosen from

    def journal_release(
        self,
        scope: Scope,
        filters: Mapping[str, str],
        released: Sequence[RecalledItem],
        policy: RecallPolicy,
    ) -> str | None:
        # The AgentCore wire API has no journal a client may write: the release is kept on the
        # run (``Run.releases``) only (docs/security.md).
        return None

    def learn(self, scope: Scope, record: NewRecord) -> Written:
        digest = content_digest(record.content)
        for summary in self._listed(scope, record.namespace):
            if content_digest(summary["content"]["text"]) == digest:
                return _written(summary["memoryRecordId"], confirmed=True)
        source = record.sources[0]
        metadata = {"category": {"stringValue": record.category}}
        if source.run_id:
            metadata["run"] = {"stringValue": source.run_id}
        answer = self._call(
            self._client.batch_create_memory_records,
            memoryId=scope.memory_id,
            records=[
                {
                    "requestIdentifier": uuid.uuid4().hex,
                    "namespaces": [record.namespace],
                    "content": {"text": record.content},
                    "timestamp": self._clock.now(),
                    "metadata": metadata,
                }
            ],
            clientToken=uuid.uuid4().hex,
        )
        return _written(_only_success(answer))

    def revise(self, scope: Scope, record_id: str, content: str, source: Source) -> Written:
        self._pinned(scope, record_id)
        answer = self._call(
            self._client.batch_update_memory_records,
            memoryId=scope.memory_id,
            records=[
                {
                    "memoryRecordId": record_id,
                    "content": {"text": content},
                    "timestamp": self._clock.now(),
                }
            ],
        )
        return _written(_only_success(answer))

    def retract(self, scope: Scope, record_id: str, reason: str) -> Written:
        self._pinned(scope, record_id)
        answer = self._call(
            self._client.batch_delete_memory_records,
            memoryId=scope.memory_id,
            records=[{"memoryRecordId": record_id}],
        )
        return _written(_only_success(answer), status=Status.RETRACTED)

    def _owns(self, scope: Scope, summary: dict[str, Any]) -> bool:
        """Whether the record lies in one of this session's namespaces, exactly: an actor id
        may contain ``/``, so ``/facts/u1/x/`` (actor ``u1/x``) is never under ``u1``'s."""
        namespaces = summary.get("namespaces") or ["/"]
        return any(_same_namespace(namespaces[0], mine) for mine in self.namespaces(scope))

    def _pinned(self, scope: Scope, record_id: str) -> None:
        """Refuse (as not found) a record whose namespace is not one of this scope's."""
        found = self._call(
            self._client.get_memory_record, memoryId=scope.memory_id, memoryRecordId=record_id
        )
        if not self._owns(scope, found["memoryRecord"]):
            raise RecordNotFoundError(record_id)

    def _listed(self, scope: Scope, namespace: str) -> Iterator[dict[str, Any]]:
        token: str | None = None
        while True:
            page = self._call(
                self._client.list_memory_records,
                memoryId=scope.memory_id,
                namespace=namespace,
                maxResults=100,
                **({"nextToken": token} if token else {}),
            )
            yield from page.get("memoryRecordSummaries", ())
            token = page.get("nextToken")
            if not token:
                return


def _same_namespace(one: str, other: str) -> bool:
    """Equal but for one optional trailing slash (``cairn.namespace_actors``)."""
    return one.removesuffix("/") == other.removesuffix("/")


def _above_the_bar(
    hits: list[tuple[float, dict[str, Any]]], policy: RecallPolicy
) -> list[tuple[float, dict[str, Any]]]:
    """The hits whose score reaches the floor, else those reaching the weak floor."""
    passing = [hit for hit in hits if hit[0] >= policy.relevance_floor]
    return passing or [hit for hit in hits if hit[0] >= policy.weak_floor]


def _item(score: float, summary: dict[str, Any], policy: RecallPolicy) -> RecalledItem:
    content = summary["content"]["text"]
    when: datetime = summary.get("timestamp") or summary["createdAt"]
    text, cut = truncate_utf8(content, policy.max_entry_bytes)
    entry = BlockEntry(
        record_id=summary["memoryRecordId"],
        date=when.date().isoformat(),
        confidence=UNKNOWN_CONFIDENCE,
        trust=Trust.UNTRUSTED,
        text=text,
        truncated=cut,
    )
    return RecalledItem(
        record_id=entry.record_id, version=None, content=content, entry=entry, evidence=score
    )


def _clamped(items: list[RecalledItem], policy: RecallPolicy) -> list[RecalledItem]:
    """Items admitted in rank order while the rendered block fits (as ``recall.budget``)."""
    used, kept = _FRAME_WITH_ENTRIES, []
    for item in items:
        cost = line_cost(item.entry)
        if used + cost > policy.block_byte_limit:
            break
        used += cost
        kept.append(item)
    return kept


def _only_success(answer: dict[str, Any]) -> str:
    (failure,) = answer.get("failedRecords") or [None]
    if failure is not None:
        raise failure_of(failure)
    record_id: str = answer["successfulRecords"][0]["memoryRecordId"]
    return record_id


def _written(record_id: str, *, status: Status = Status.ACTIVE, confirmed: bool = False) -> Written:
    # Records written through the API cite an `import` source: untrusted (cairn.api.record_codec).
    return Written(
        record_id=record_id,
        version=None,
        status=status,
        trust=Trust.UNTRUSTED,
        confirmed=confirmed,
    )
