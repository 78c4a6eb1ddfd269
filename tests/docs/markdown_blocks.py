"""The fenced code blocks of a Markdown page, as a test runs them (doctest-style).

- ```` ```console ```` is a shell transcript: each line starting with ``$ `` is a command, the
  lines after it (up to the next command) are what it prints. In that output ``...`` matches
  any text, across lines. In a command, an id written ``mem-...`` or ``jrn-...`` stands for the
  last such id printed before it.
- ```` ```python ```` is a program, run on its own; a ```` ```text ```` block right after it is
  what it prints (with ``...`` as above).
- A block preceded by ``<!-- not run: REASON -->`` is left alone, and says why.

Every other block is an error, so a page cannot grow a block nobody runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

FENCE = re.compile(r"^```(\w*)\s*$")
NOT_RUN = re.compile(r"^<!-- not run: (.+) -->$")
PLACEHOLDER = re.compile(r"\b(mem|jrn)-\.\.\.")
ID_OF_KIND = {
    "mem": re.compile(r"\bmem-[a-zA-Z0-9_-]{36,46}"),
    "jrn": re.compile(r"\bjrn-[a-zA-Z0-9_-]{20,46}"),
}


@dataclass(frozen=True)
class Command:
    """One ``$`` line of a transcript and the output shown under it."""

    line: int
    text: str
    expected: str


@dataclass(frozen=True)
class Block:
    """One fenced block: its language, first line number, body, and what it should print."""

    language: str
    line: int
    body: str
    not_run: str | None = None
    expected: str | None = None
    commands: tuple[Command, ...] = field(default=())


def _transcript(start: int, body: str) -> tuple[Command, ...]:
    commands: list[Command] = []
    current: tuple[int, str] | None = None
    shown: list[str] = []
    for offset, text in enumerate(body.splitlines(), start=1):
        if text.startswith("$ "):
            if current is not None:
                commands.append(Command(current[0], current[1], "\n".join(shown)))
            current, shown = (start + offset, text[2:]), []
        elif current is None:
            raise ValueError(f"line {start + offset}: a console block starts with a `$ ` command")
        else:
            shown.append(text)
    if current is not None:
        commands.append(Command(current[0], current[1], "\n".join(shown)))
    return tuple(commands)


def _raw_blocks(text: str) -> list[tuple[str, int, str, str | None]]:
    """(language, line of the opening fence, body, not-run reason) for every fenced block."""
    found: list[tuple[str, int, str, str | None]] = []
    lines = text.splitlines()
    index = 0
    previous = ""
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            if lines[index].strip():
                previous = lines[index].strip()
            index += 1
            continue
        start = index
        index += 1
        while index < len(lines) and lines[index].rstrip() != "```":
            index += 1
        body = "\n".join(lines[start + 1 : index])
        reason = NOT_RUN.match(previous)
        found.append((opening.group(1), start + 1, body, reason.group(1) if reason else None))
        previous = ""
        index += 1
    return found


def blocks_of(path: Path) -> list[Block]:
    """The page's blocks, each ``text`` block folded into the ``python`` block before it."""
    blocks: list[Block] = []
    for language, line, body, reason in _raw_blocks(path.read_text(encoding="utf-8")):
        if reason is not None:
            blocks.append(Block(language, line, body, not_run=reason))
        elif language == "console":
            blocks.append(Block(language, line, body, commands=_transcript(line, body)))
        elif language == "text" and blocks and blocks[-1].language == "python":
            last = blocks.pop()
            blocks.append(Block(last.language, last.line, last.body, expected=body))
        else:
            blocks.append(Block(language, line, body))
    return blocks


def shows(expected: str, actual: str) -> bool:
    """Whether ``actual`` is what ``expected`` shows, ``...`` matching any text (lines too);
    trailing spaces and blank lines at the end are ignored."""

    def tidy(text: str) -> str:
        return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())

    pattern = ".*?".join(re.escape(part) for part in tidy(expected).split("..."))
    return re.fullmatch(pattern, tidy(actual), flags=re.DOTALL) is not None


def fill_placeholders(command: str, printed: str) -> str:
    """``command`` with each ``mem-...`` / ``jrn-...`` replaced by the last such id in
    ``printed``; ``ValueError`` if none was printed yet."""

    def last_id(match: re.Match[str]) -> str:
        ids = ID_OF_KIND[match.group(1)].findall(printed)
        if not ids:
            raise ValueError(f"{match.group(0)} in {command!r} but no such id was printed before")
        return str(ids[-1])

    return PLACEHOLDER.sub(last_id, command)
