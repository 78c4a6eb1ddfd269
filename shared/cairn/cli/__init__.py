"""cairn.cli: the ``cairn`` command (``cairn.cli.main``), behind an entry point that imports it.

The console script and ``python -m cairn`` call ``main`` here, which imports the command only
when called, so a Ctrl-C while Python is still loading cairn ends as the same one line as a
Ctrl-C later (``cairn: error: interrupted``, status 130), never a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

INTERRUPTED_EXIT = 130


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``cairn`` command (see ``cairn.cli.main.main``)."""
    try:
        from cairn.cli.main import main as run_command
    except KeyboardInterrupt:
        print("cairn: error: interrupted", file=sys.stderr)
        return INTERRUPTED_EXIT
    return run_command(argv)


__all__ = ["main"]
