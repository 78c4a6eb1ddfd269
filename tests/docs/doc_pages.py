"""The Markdown pages a reader sees (README.md and docs/*.md), their links and anchors."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (.+)$", flags=re.MULTILINE)
ANCHOR = re.compile(r'<a id="([^"]+)"></a>')


@dataclass(frozen=True)
class Link:
    """One inline link: the line it starts on, its text and its target as written."""

    line: int
    text: str
    target: str


def links_of(page: Path) -> list[Link]:
    text = page.read_text(encoding="utf-8")
    return [
        Link(text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2))
        for m in LINK.finditer(text)
    ]


def anchors(page: Path) -> set[str]:
    """GitHub's heading slugs (lower case, punctuation dropped, spaces to dashes) and ids."""
    text = page.read_text(encoding="utf-8")
    slugs = {
        re.sub(r"[^\w\- ]", "", heading.lower()).strip().replace(" ", "-")
        for heading in HEADING.findall(text)
    }
    return slugs | set(ANCHOR.findall(text))
