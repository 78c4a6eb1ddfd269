"""What the cost runs say and remember: conversations, the memory they go to, seeded records,
and the model and embedder stand-ins that measure what a real one would be sent.

- Conversations come in segments of six turns (the built-in message trigger): three user turns
  the offline extractor files (a fact, a preference, a "remember that"), each answered by an
  assistant turn of a few sentences, as chat replies are. Sizes are in ``message_sizes``.
- ``MeasuredModel`` answers with the offline heuristic model (no network) and keeps what a
  hosted model would have been sent and would have answered: bytes in and out, and calls.
- ``StandInEmbedder`` is the hashing embedder wearing the deployed embedder's identity and
  width (Titan Text Embeddings V2, 1,024 dimensions: the stack's default), so the stored vector
  items have exactly the deployed size; it counts the texts Titan would have been sent.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

from cairn.changes import Create, NewRecord, Vector
from cairn.clock import FixedClock
from cairn.embed.bedrock import DIMS as TITAN_DIMS
from cairn.embed.bedrock import MODEL_ID as TITAN_MODEL_ID
from cairn.embed.hashing import HashingEmbedder
from cairn.local import offline_model
from cairn.model_request import ModelRequest, ModelResponse
from cairn.models import Conversational, EmbedderId, EventInput, RecordVersion, Role, Scope
from cairn.ports import FloatMatrix, RecordPlacement, Stores

SEGMENT_TURNS = 6
_THINGS = (
    ("office", "in Lisbon"),
    ("dentist", "Dr Okafor on Rua Augusta"),
    ("bike", "a green Brompton"),
    ("sister's name", "Ines"),
    ("gym day", "Thursday evening"),
    ("flat", "on the fourth floor"),
    ("team", "the payments squad"),
    ("car", "a 2016 Yaris"),
    ("cat", "called Miso"),
    ("laptop", "a ThinkPad X1"),
    ("usual train", "the 08:12 to Cascais"),
    ("doctor", "Dr Silva"),
)
_LIKES = (
    "oat milk flat whites in the morning",
    "window seats on long flights",
    "short meetings",
    "vegetarian restaurants",
    "e-mail over phone calls",
    "early dinners",
    "dark mode",
    "hiking on Sundays",
    "audiobooks on the commute",
    "green tea after lunch",
)
_NOTES = (
    "the rent is due on the first",
    "my passport expires in March",
    "I am allergic to penicillin",
    "the boiler service is in May",
    "my manager is called Rui",
    "the wifi password is on the fridge",
    "I run the 10k in October",
    "my mother's birthday is 12 June",
)
_REPLY = (
    "Thanks, I have made a note of that and will keep it in mind when we plan things together. "
    "If anything changes, just tell me and I will update what I remember. Is there anything "
    "else you would like me to take care of today, or shall we pick up where we left off with "
    "the list from earlier this week?"
)


def segment(n: int) -> tuple[tuple[Role, str], ...]:
    """The ``n``-th six-turn exchange: distinct facts each time, deterministic."""
    thing, value = _THINGS[n % len(_THINGS)]
    like = _LIKES[n % len(_LIKES)]
    note = _NOTES[n % len(_NOTES)]
    return (
        (Role.USER, f"Quick update for you. My {thing} is {value} since week {n}."),
        (Role.ASSISTANT, f"Understood about your {thing}. {_REPLY}"),
        (Role.USER, f"One more thing. I prefer {like}, at least in week {n}."),
        (Role.ASSISTANT, f"Good to know you like {like}. {_REPLY}"),
        (Role.USER, f"Remember that {note} (item {n})."),
        (Role.ASSISTANT, f"I will remember that {note}. {_REPLY}"),
    )


def message_sizes() -> dict[str, float]:
    """Mean UTF-8 bytes of a user and of an assistant turn in the conversations."""
    turns = [t for n in range(12) for t in segment(n)]
    sizes = {
        role: [len(text.encode("utf-8")) for r, text in turns if r is role]
        for role in (Role.USER, Role.ASSISTANT)
    }
    return {role.value.lower(): sum(v) / len(v) for role, v in sizes.items()}


def event(role: Role, text: str, session_id: str, clock: FixedClock) -> EventInput:
    """One conversational turn at the clock's time; the clock moves on a second."""
    turn = EventInput(
        session_id=session_id,
        event_timestamp=clock.now(),
        payload=(Conversational(role=role, text=text),),
    )
    clock.advance(seconds=1)
    return turn


@dataclass
class ModelUse:
    calls: int = 0
    prompt_bytes: int = 0
    answer_bytes: int = 0
    seconds: float = 0.0


class MeasuredModel:
    """The heuristic model; counts calls and the bytes a hosted model would read and write."""

    def __init__(self) -> None:
        self._inner = offline_model()
        self.use = ModelUse()

    def complete(self, request: ModelRequest) -> ModelResponse:
        started = time.perf_counter()
        try:
            return self._answer(request)
        finally:
            self.use.seconds += time.perf_counter() - started

    def _answer(self, request: ModelRequest) -> ModelResponse:
        answer = self._inner.complete(request)
        schema = json.dumps(request.output.json_schema) if request.output else ""
        prompt = request.system + "".join(m.text for m in request.messages) + schema
        self.use.calls += 1
        self.use.prompt_bytes += len(prompt.encode("utf-8"))
        self.use.answer_bytes += len(answer.text.encode("utf-8"))
        return answer


class StandInEmbedder:
    """Hashing vectors at Titan v2's width under Titan's identity; counts texts and bytes."""

    def __init__(self) -> None:
        self._inner = HashingEmbedder(dims=TITAN_DIMS)
        self._identity = EmbedderId(model_id=TITAN_MODEL_ID, dims=TITAN_DIMS)
        self.use = ModelUse()

    @property
    def identity(self) -> EmbedderId:
        return self._identity

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        started = time.perf_counter()
        try:
            return self._inner.embed(texts)
        finally:
            self.use.calls += len(texts)  # Titan v2: one InvokeModel per text
            self.use.prompt_bytes += sum(len(t.encode("utf-8")) for t in texts)
            self.use.seconds += time.perf_counter() - started


# Where a scope's records lie, as extraction files them: facts, preferences, one summary
# per past session (namespaces of the memory ``memory_body`` creates).
SEED_MIX = (("facts", 0.70), ("preferences", 0.25), ("summaries", 0.05))


def memory_body(name: str) -> dict[str, object]:
    """CreateMemory with AgentCore's three built-in strategies and their usual namespaces."""
    return {
        "name": name,
        "eventExpiryDuration": 30,
        "memoryStrategies": [
            {"semanticMemoryStrategy": {"name": "facts", "namespaces": ["/facts/{actorId}/"]}},
            {
                "userPreferenceMemoryStrategy": {
                    "name": "preferences",
                    "namespaces": ["/preferences/{actorId}/"],
                }
            },
            {
                "summaryMemoryStrategy": {
                    "name": "summaries",
                    "namespaces": ["/summaries/{actorId}/{sessionId}/"],
                }
            },
        ],
    }


def _namespace_kind(version: RecordVersion) -> str:
    return version.namespace.strip("/").split("/")[0]


def seed_records(
    scope: Scope,
    count: int,
    templates: Sequence[RecordVersion],
    *,
    stores: Stores,
    embedder: StandInEmbedder,
) -> None:
    """``count`` live records in ``scope``, shaped like the extracted ``templates`` (sources,
    strategy, tags) in the ``SEED_MIX`` proportions, each with its own text and vector."""
    by_kind = {_namespace_kind(v): v for v in templates}
    fallback = templates[0]
    plan = [(kind, n) for kind, share in SEED_MIX for n in range(round(count * share))]
    texts = [f"{segment(n)[0][1]} Seeded {kind} record {n}." for kind, n in plan[:count]]
    vectors = embedder.embed(texts)
    records = []
    for (kind, n), text, vector in zip(plan, texts, vectors, strict=False):
        template = by_kind.get(kind, fallback)
        namespace = f"/{kind}/{scope.actor_id}/" + (f"past-{n}/" if kind == "summaries" else "")
        fields = template.model_dump(include=set(NewRecord.model_fields) - {"record_id", "vector"})
        vector_of = Vector(embedder=embedder.identity, values=tuple(float(x) for x in vector))
        records.append(
            NewRecord(**{**fields, "namespace": namespace, "content": text}, vector=vector_of)
        )
    for start in range(0, len(records), 16):
        made = stores.records.apply(scope, [Create(record=r) for r in records[start : start + 16]])
        if stores.directory is not None:
            stores.directory.place(
                scope.memory_id,
                [
                    RecordPlacement(
                        record_id=v.record_id, actor_id=v.actor_id, namespace=v.namespace
                    )
                    for v in made
                ],
            )
