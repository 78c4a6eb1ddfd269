"""cairn.cli: the public names, re-exported from ``cairn.cli.main``."""

from cairn.cli.main import (
    main,
)

__all__ = [
    "main",
]
