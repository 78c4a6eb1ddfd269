"""The docs point at things that exist: every link's file and anchor, and serve's real port."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cairn.cli.serve import DEFAULT_PORT
from tests.docs.doc_pages import PAGES, ROOT, anchors, links_of


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_link_names_a_file_and_anchor_that_exist(page: Path) -> None:
    broken = []
    for target in (link.target for link in links_of(page)):
        if re.match(r"^[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no such anchor")
    assert not broken, broken


def test_examples_and_docs_name_the_port_cairn_serve_uses() -> None:
    texts = [ROOT / "examples" / "converse_agent.py", *PAGES]
    # Where a URL points a client at `cairn serve` (model servers' URLs are other ports).
    serve_url = re.compile(
        r"(?:--endpoint |endpoint_url=[\"']|AWS_ENDPOINT_URL_BEDROCK_AGENTCORE(?:_CONTROL)?=)"
        r"http://127\.0\.0\.1:(\d+)"
    )
    ports = {
        int(port) for path in texts for port in serve_url.findall(path.read_text(encoding="utf-8"))
    }
    assert ports == {DEFAULT_PORT}
