"""cairn.store.memory: the public names, re-exported from ``cairn.store.memory.backend``."""

from cairn.store.memory.backend import (
    InMemoryBackend,
)

__all__ = [
    "InMemoryBackend",
]
