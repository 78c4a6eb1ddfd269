"""The docs name code that exists: every repository path and every dotted module they quote.

A page that describes a function, a layer or a module the code no longer has (``docs/
architecture.md`` and ``docs/deploy.md`` once did) misleads whoever follows it. Each path in
backticks under ``functions/``, ``infra/``, ``shared/cairn/``, ``tests/``, ``benchmarks/`` or
``examples/`` must exist (``path/file.py::test`` and ``path/module.attribute`` name the file),
and each dotted ``cairn.…``, ``functions.…`` or ``infra.…`` name must be a module, or a name
written in its module.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
REPO_PATH = re.compile(
    r"`((?:functions|infra|shared/cairn|tests|benchmarks|examples)/[A-Za-z0-9_./-]+)(?:::\w+)?`"
)
# A dotted name alone in its backticks (``cairn.toml`` is a file name, ``cairn.evidence/1`` a
# schema tag: neither ends like this).
DOTTED = re.compile(r"`((?:cairn|functions|infra)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`")
NOT_MODULES = frozenset({"cairn.toml"})


def _path_exists(quoted: str) -> bool:
    path = ROOT / quoted.rstrip("/.")
    if path.exists():
        return True
    # ``functions/_common/wiring.build_api``: a name in a module.
    module, _, name = quoted.rpartition(".")
    source = ROOT / f"{module}.py"
    return bool(name) and source.exists() and _defines(source, name)


def _defines(source: Path, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", source.read_text(encoding="utf-8")) is not None


def _dotted_exists(name: str) -> bool:
    parts = name.split(".")
    base = ROOT / "shared" if parts[0] == "cairn" else ROOT
    for size in range(len(parts), 0, -1):
        stem = base.joinpath(*parts[:size])
        source = (
            stem.with_suffix(".py") if stem.with_suffix(".py").exists() else stem / "__init__.py"
        )
        if source.exists():
            return size == len(parts) or _defines(source, parts[size])
    return False


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_path_and_module_a_page_names_exists(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    missing = [p for p in REPO_PATH.findall(text) if not _path_exists(p)]
    missing += [n for n in DOTTED.findall(text) if n not in NOT_MODULES and not _dotted_exists(n)]
    assert not missing, f"{page.name} names what the code does not have: {missing}"


def test_a_name_that_is_not_there_is_caught() -> None:
    assert not _path_exists("functions/_common/layers.py")
    assert not _path_exists("shared/cairn/store/_dynamodb_codec.py")
    assert not _dotted_exists("cairn.store.dynamodb_schema")
    assert not _dotted_exists("cairn.recall.index.embedded.NoSuchIndex")
    assert _path_exists("functions/_common/wiring.build_api")
    assert _dotted_exists("cairn.recall.index.embedded.EmbeddedRecallIndex")
