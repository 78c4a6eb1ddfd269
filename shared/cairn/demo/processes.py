"""The demos' processes: each step is a child ``python -m cairn`` process under a ruled heading.

A child reports its own failure in one line on stderr; the parent stops with ``DemoStepError``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path


def print_heading(step: str, title: str, *explanation: str) -> None:
    """Print a demo step's ruled heading and its explanation lines, flushed before a child runs."""
    rule = "=" * 78
    print(f"\n{rule}\n{step}  {title}\n{rule}", *explanation, sep="\n", flush=True)


def run_child(arguments: Sequence[str]) -> str:
    """Run ``python -m cairn ARGUMENTS``, echo its output, and return it; stop if it failed."""
    completed = subprocess.run(  # noqa: S603 - our own interpreter and module, fixed arguments
        [sys.executable, "-m", "cairn", *arguments],
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        check=False,
    )
    print(completed.stdout, end="", flush=True)
    if completed.returncode != 0:
        raise DemoStepError(arguments[0], completed.returncode)
    return completed.stdout


def command_name(argv0: str | None = None) -> str:
    """How the user can run ``cairn`` again from here: ``cairn`` if that is on PATH and is
    this command, else the path it was started by (``.venv/bin/cairn`` after ``make demo``),
    or ``python -m cairn``."""
    started = Path(argv0 if argv0 is not None else sys.argv[0])
    if started.name != "cairn":
        return "python -m cairn"
    on_path = shutil.which("cairn")
    if on_path is not None and Path(on_path).resolve() == started.resolve():
        return "cairn"
    try:
        return str(started.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(started.resolve())


class DemoStepError(Exception):
    """A child process of the demo failed; its own one-line error is already on stderr."""

    def __init__(self, step: str, status: int) -> None:
        super().__init__(f"the demo's {step!r} process failed with exit status {status}")
        self.status = status
