"""Where the embedded store lives by default; light to import (platformdirs only), so the
``cairn`` command can name it in ``--help`` without loading the store."""

from __future__ import annotations

from pathlib import Path

import platformdirs


def default_store_path() -> Path:
    """``<user data dir>/cairn.db``, e.g. ``~/.local/share/cairn/cairn.db`` on Linux."""
    return Path(platformdirs.user_data_dir("cairn")) / "cairn.db"
