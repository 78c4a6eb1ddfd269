"""docs/reliability.md's fault matrix is what the marked fault tests generate, every cell green.

The marked tests are collected, not run (the suite runs them): the committed block must be the
one ``python -m tests.fault_matrix --write`` renders from them when all pass, so a marker
added, moved or dropped without regenerating fails here, and so does a committed cell that is
not green.
"""

from __future__ import annotations

import re

import pytest

from tests.fault_matrix import DOC, FILES, REPO, committed_block, gather, render

pytestmark = pytest.mark.slow  # collects moto- and process-based test modules in a subprocess


def test_the_committed_fault_matrix_is_the_one_the_marked_tests_generate() -> None:
    found = gather(run=False)
    assert found, "no test carries @pytest.mark.fault"
    green = {nodeid: {**entry, "outcome": "passed"} for nodeid, entry in found.items()}

    assert committed_block(DOC.read_text(encoding="utf-8")) == render(green)


def test_every_marked_fault_test_is_in_a_file_the_generator_runs() -> None:
    marked = {
        str(path.relative_to(REPO))
        for path in (REPO / "tests").rglob("test_*.py")
        if re.search(r"@pytest\.mark\.fault\(", path.read_text(encoding="utf-8"))
    }

    assert marked == set(FILES)
