"""A figure the docs quote is the figure in the row it links to.

A *quoted figure* is a number in the text of a link (README.md, docs/*.md) whose target is an
``<a id="...">`` anchor of a docs page: ``[R@10 0.772](docs/benchmarks.md#quality-cairn-defaults)``,
``[85.4%](...)``, ``[$0.547 a month](...)``, ``[12.8 ms against 7.1 ms: 1.81x](...)``,
``[10,000-user bot](...)``. A number is digits with optional thousands commas and decimals,
with an optional leading ``$`` and trailing ``%`` or ``x``; digits inside a word or a name
(``R@10``, ``mem0``, ``top_k``) and version numbers (``2.2.1``) are not figures. Each figure
must appear, as written, among the numbers of the anchored line: the row's cells for an anchor
in a table row (the generated tables of docs/benchmarks.md and docs/cost.md), the paragraph's
line for an anchor on a paragraph. A percentage may also stand for a fraction in the row
(``77.2%`` for ``0.772``, to the fraction's precision). Links to headings are not checked.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs.doc_pages import ANCHOR, PAGES, ROOT, links_of

FIGURE = re.compile(r"(?<![\w@.,$-])\$?\d+(?:,\d{3})*(?:\.\d+)?(?:%|x\b)?(?![\d,]*\.?\d|\w)")


def figures(text: str) -> list[str]:
    """The quoted figures in ``text``, as written (anchor tags left out)."""
    return FIGURE.findall(ANCHOR.sub("", text))


def _stands_for(figure: str, row: list[str]) -> bool:
    if figure in row:
        return True
    if not figure.endswith("%"):
        return False
    percent = figure[:-1]
    places = len(percent.partition(".")[2]) + 2
    return any(
        re.fullmatch(r"\d+\.\d+", value) is not None
        and len(value.partition(".")[2]) == places
        and f"{float(value) * 100:.{places - 2}f}" == percent
        for value in row
    )


def anchored_row(page: Path, anchor: str) -> tuple[str, str] | None:
    """The line holding ``<a id="anchor">`` on ``page`` and how to show it (a table row as
    ``header: cell`` pairs), or None if no such anchor."""
    lines = page.read_text(encoding="utf-8").splitlines()
    tag = f'<a id="{anchor}"></a>'
    for index, line in enumerate(lines):
        if tag not in line:
            continue
        if not line.startswith("|"):
            return line, ANCHOR.sub("", line)
        top = index
        while top > 0 and lines[top - 1].startswith("|"):
            top -= 1
        header = [cell.strip() for cell in lines[top].strip("|").split("|")]
        cells = [ANCHOR.sub("", cell).strip() for cell in line.strip("|").split("|")]
        return line, "; ".join(f"{name}: {cell}" for name, cell in zip(header, cells, strict=False))
    return None


def stale_figures(page: Path) -> list[str]:
    """One line per quoted figure of ``page`` missing from its anchored row."""
    stale = []
    for link in links_of(page):
        path, _, anchor = link.target.partition("#")
        quoted = figures(link.text)
        if not anchor or not quoted or re.match(r"^[a-z]+:", link.target):
            continue
        found = anchored_row((page.parent / path).resolve() if path else page, anchor)
        if found is None:
            continue  # a heading's anchor (test_doc_links checks that it exists)
        line, shown = found
        row = figures(line)
        name = page.relative_to(ROOT) if page.is_relative_to(ROOT) else page.name
        stale.extend(
            f"{name}:{link.line} [{link.text}]({link.target}): "
            f"{figure} is not in the row, which reads {shown}"
            for figure in quoted
            if not _stands_for(figure, row)
        )
    return stale


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_quoted_figure_is_in_the_row_it_links_to(page: Path) -> None:
    stale = stale_figures(page)
    assert not stale, "\n".join(stale)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("R@10 0.772", ["0.772"]),
        ("$164.61 a month", ["$164.61"]),
        ("12.8 ms against 7.1 ms: 1.81x", ["12.8", "7.1", "1.81x"]),
        ("10,000-user bot", ["10,000"]),
        ("85.4%", ["85.4%"]),
        ("mem0 2.2.1, top_k 8", ["8"]),
        ('<a id="speed-recall-10000"></a>10,000', ["10,000"]),
    ],
)
def test_what_counts_as_a_quoted_figure(text: str, expected: list[str]) -> None:
    assert figures(text) == expected


@pytest.mark.parametrize(
    ("figure", "stands"),
    [
        ("0.772", True),
        ("77.2%", True),  # the fraction, to its precision
        ("11.1%", True),
        ("0.764", False),
        ("77%", False),  # rounded further than the row
        ("0.111", False),  # a percentage in the row is not a fraction
        ("772", False),
    ],
)
def test_a_figure_stands_for_a_row_value_as_written_or_as_a_percentage(
    figure: str, stands: bool
) -> None:
    assert _stands_for(figure, ["760", "0.377", "0.772", "11.1%"]) is stands


def test_a_stale_figure_is_named_with_its_link_its_figure_and_the_row(tmp_path: Path) -> None:
    (tmp_path / "bench.md").write_text(
        "| retriever | n | R@10 |\n|---|---|---|\n"
        '| <a id="quality-x"></a>cairn | 760 | 0.772 |\n\n'
        '<a id="speed-memory"></a>Peak: 332 MB mapped, 592 MB on the first build.\n',
        encoding="utf-8",
    )
    page = tmp_path / "page.md"
    page.write_text(
        "Finds [R@10 0.764](bench.md#quality-x) and [77.2%](bench.md#quality-x),\n"
        "in [332 MB, 600 MB](bench.md#speed-memory) of [760 questions](#nowhere).\n",
        encoding="utf-8",
    )
    assert stale_figures(page) == [
        "page.md:1 [R@10 0.764](bench.md#quality-x): 0.764 is not in the row, which reads "
        "retriever: cairn; n: 760; R@10: 0.772",
        "page.md:2 [332 MB, 600 MB](bench.md#speed-memory): 600 is not in the row, which "
        "reads Peak: 332 MB mapped, 592 MB on the first build.",
    ]
