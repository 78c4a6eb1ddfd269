"""The embedded system: cairn assembled on one machine.

The SQLite store, payloads staged on disk (``FilesystemStagingStore``), the in-process
extraction and consolidation workers (``open_embedded``, ``wire_embedded``,
``EmbeddedExtraction``), the API served over them (``serve_embedded``, ``EmbeddedApi``) and the
offline heuristic model (``offline_model``). This package is a composition root: features never
import it.
"""

from cairn.local.api import EmbeddedApi, serve_embedded
from cairn.local.fs_staging import FilesystemStagingStore
from cairn.local.offline import offline_model
from cairn.local.system import EmbeddedExtraction, open_embedded, staging_dir, wire_embedded

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
