"""``python -m cairn``: the same command as the ``cairn`` console script."""

import sys

from cairn.cli import main

if __name__ == "__main__":
    sys.exit(main())
