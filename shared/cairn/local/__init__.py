"""The embedded system: cairn assembled on one machine.

The SQLite store, payloads staged on disk (``FilesystemStagingStore``), the in-process
extraction and consolidation workers (``open_embedded``, ``wire_embedded``,
``EmbeddedExtraction``), the API served over them (``serve_embedded``, ``EmbeddedApi``) and the
offline heuristic model (``offline_model``). This package is a composition root: features never
import it.

The names are imported on first use (PEP 562), so a light submodule (``cairn.local.paths``)
does not load the whole system.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cairn.local.api import EmbeddedApi, serve_embedded
    from cairn.local.fs_staging import FilesystemStagingStore
    from cairn.local.offline import offline_model
    from cairn.local.system import EmbeddedExtraction, open_embedded, staging_dir, wire_embedded

_HOMES = {
    "EmbeddedApi": "cairn.local.api",
    "serve_embedded": "cairn.local.api",
    "offline_model": "cairn.local.offline",
    "FilesystemStagingStore": "cairn.local.fs_staging",
    "EmbeddedExtraction": "cairn.local.system",
    "open_embedded": "cairn.local.system",
    "staging_dir": "cairn.local.system",
    "wire_embedded": "cairn.local.system",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'cairn.local' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


__all__ = [
    "EmbeddedApi",
    "EmbeddedExtraction",
    "FilesystemStagingStore",
    "offline_model",
    "open_embedded",
    "serve_embedded",
    "staging_dir",
    "wire_embedded",
]
