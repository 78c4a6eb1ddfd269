"""Test doubles shipped with cairn; the backend and the clock pass the same conformance suite as
the real thing, the models answer from a script and keep what they were asked.

- ``InMemoryBackend``: the reference backend (records, events, journal) in process memory.
- ``FixedClock``: a clock that moves only when told to.
- ``HashingEmbedder``: a deterministic bag-of-words embedder for unit tests only.
- ``ScriptedModel``: a model provider that answers from a queue and records every request.
- ``ScriptedConverse``: a Converse-shaped model (``converse(**request)``) that answers from a
  script and keeps a copy of every request (``cairn.testing.scripted_converse`` has the reply
  builders ``say`` and ``use_tool``); the offline agent demo runs on it.
- ``RequestLog`` (``cairn.testing.requests``): counts the requests a boto3 client sends.
"""

from cairn.clock import FixedClock
from cairn.embed.hashing import HashingEmbedder
from cairn.llm.scripted import ScriptedModel
from cairn.store.memory import InMemoryBackend
from cairn.testing.scripted_converse import ScriptedConverse

__all__ = ["FixedClock", "HashingEmbedder", "InMemoryBackend", "ScriptedConverse", "ScriptedModel"]
