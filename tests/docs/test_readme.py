"""The README is executable: every block runs as written and prints what the README shows.

The whole page runs once, top to bottom, as a newcomer would run it after ``make demo``: in a
fresh directory whose ``.venv/bin/cairn`` is the real command (``python -m cairn`` in a
subprocess), with a fresh home directory (so the default store is new and empty), no
``CAIRN_*`` variable inherited and no other ``cairn`` on ``PATH``. Console transcripts run
command by command through ``bash``, exported variables carried from one to the next; Python
blocks run each in its own interpreter. Blocks that cannot run here say why in the README
(``<!-- not run: ... -->``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.docs.markdown_blocks import Block, blocks_of, fill_placeholders, shows

pytestmark = [pytest.mark.onnx, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
BLOCKS = blocks_of(README)
TIMEOUT = 180
# Commands the README shows that do not yet do what it says, each with the reason (a strict
# xfail). Issue 13's weak fallback closed the last one: the README's recall of the tea.
KNOWN_GAPS: dict[str, str] = {}
# Each command runs in a fresh bash that first reads the variables the last one exported.
SHELL_STEP = """
[ -f "$README_STATE" ] && . "$README_STATE"
{command}
status=$?
export -p > "$README_STATE"
exit $status
"""


@dataclass(frozen=True)
class Outcome:
    status: int
    stdout: str
    stderr: str


def _clean_path() -> str:
    """``PATH`` without any directory that holds a ``cairn`` executable."""
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(d for d in dirs if d and not (Path(d) / "cairn").exists())


def _newcomer(root: Path) -> tuple[Path, dict[str, str]]:
    """A checkout-like directory with ``.venv/bin/cairn``, and the environment to run in."""
    work = root / "clone"
    shim = work / ".venv" / "bin" / "cairn"
    shim.parent.mkdir(parents=True)
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m cairn "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    home = root / "home"
    home.mkdir()
    inherited = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CAIRN_", "XDG_")) and k not in {"HOME", "PATH"}
    }
    env = {**inherited, "HOME": str(home), "PATH": _clean_path()}
    env["README_STATE"] = str(root / "shell-state")
    return work, env


def _run_page(root: Path) -> dict[int, Outcome]:
    work, env = _newcomer(root)
    outcomes: dict[int, Outcome] = {}
    printed = ""
    for block in BLOCKS:
        if block.not_run is not None:
            continue
        if block.language == "console":
            for command in block.commands:
                try:
                    text = fill_placeholders(command.text, printed)
                except ValueError as exc:
                    outcomes[command.line] = Outcome(-1, "", str(exc))
                    continue
                done = subprocess.run(  # noqa: S603 - bash running the README's own commands
                    ["bash", "-c", SHELL_STEP.format(command=text)],  # noqa: S607
                    cwd=work,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=TIMEOUT,
                    check=False,
                )
                outcomes[command.line] = Outcome(done.returncode, done.stdout, done.stderr)
                printed += done.stdout
        elif block.language == "python":
            done = subprocess.run(  # noqa: S603 - the README's own program
                [sys.executable, "-c", block.body],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                check=False,
            )
            outcomes[block.line] = Outcome(done.returncode, done.stdout, done.stderr)
    return outcomes


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Outcome]:
    return _run_page(tmp_path_factory.mktemp("readme"))


def _commands() -> list[object]:
    params: list[object] = []
    for block in BLOCKS:
        if block.language != "console" or block.not_run is not None:
            continue
        for command in block.commands:
            gap = next(
                (why for cmd, why in KNOWN_GAPS.items() if command.text.startswith(cmd)), None
            )
            marks = [pytest.mark.xfail(reason=gap, strict=True)] if gap else []
            name = f"line {command.line}: {command.text.split('  #')[0].strip()}"
            params.append(pytest.param(command.line, command.expected, id=name, marks=marks))
    return params


def _programs() -> list[object]:
    return [
        pytest.param(block, id=f"line {block.line}")
        for block in BLOCKS
        if block.language == "python" and block.not_run is None
    ]


def test_every_block_runs_or_says_why_not() -> None:
    unexplained = [
        f"line {block.line} ({block.language or 'no language'})"
        for block in BLOCKS
        if block.not_run is None and block.language not in {"console", "python"}
    ]
    assert not unexplained, f"README blocks nobody runs: {unexplained}"
    assert any(block.commands for block in BLOCKS), "the README shows no command"
    assert len(_programs()) >= 2, "the README lost its Python quick starts"


@pytest.mark.parametrize(("line", "expected"), _commands())
def test_readme_command_prints_what_the_readme_shows(
    page: dict[int, Outcome], line: int, expected: str
) -> None:
    outcome = page[line]
    assert outcome.status == 0, f"exit {outcome.status}: {outcome.stderr}"
    assert shows(expected, outcome.stdout), f"printed:\n{outcome.stdout}\nREADME:\n{expected}"


@pytest.mark.parametrize("block", _programs())
def test_readme_program_prints_what_the_readme_shows(
    page: dict[int, Outcome], block: Block
) -> None:
    outcome = page[block.line]
    assert outcome.status == 0, f"exit {outcome.status}: {outcome.stderr}"
    assert block.expected is not None, "show what the program prints in a text block after it"
    assert shows(block.expected, outcome.stdout), f"printed:\n{outcome.stdout}"
