"""Test doubles shipped with cairn; each passes the same conformance suite as the real thing.

- ``InMemoryBackend``: the reference backend (records, events, journal) in process memory.
- ``FixedClock``: a clock that moves only when told to.
- ``HashingEmbedder``: a deterministic bag-of-words embedder for unit tests only.
- ``ScriptedModel``: a model provider that answers from a queue and records every request.
"""

from cairn.clock import FixedClock
from cairn.embed.hashing import HashingEmbedder
from cairn.llm.scripted import ScriptedModel
from cairn.store.memory import InMemoryBackend

__all__ = ["FixedClock", "HashingEmbedder", "InMemoryBackend", "ScriptedModel"]
