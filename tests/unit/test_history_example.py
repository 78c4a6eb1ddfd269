"""The runnable example of docs/history.md runs offline and shows what the page says."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from cairn.history.boot_window import HEADING

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "history_channel.py"


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("history_channel_example", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_rolls_up_resumes_queries_a_period_and_drills_down(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shown = _example().main(tmp_path / "history.db")

    assert shown["written"] == {1: 12, 2: 1}
    block = str(shown["block"])
    assert block.startswith(HEADING)
    assert "summary L2" in block
    assert "- turn 120 | 2026-03-02 19:59 | " in block, "the newest turn is shown verbatim"
    assert shown["period"] == [
        "L2-00000001-00000100",
        "L1-00000031-00000040",
        "L1-00000041-00000050",
        "L1-00000051-00000060",
        "L1-00000061-00000070",
    ]
    assert (shown["parts"], shown["first_turns"]) == (10, 10)
    both = shown["both"]
    assert isinstance(both, list)
    assert both[0] == ("turns", "USER: The Oslo hotel is near the harbour.")
    assert "rolled up" in capsys.readouterr().out
