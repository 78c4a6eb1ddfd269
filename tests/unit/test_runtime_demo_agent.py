"""``cairn demo-agent``: a lesson learned in one process's run, recalled in the next process's
run, edited there, and the edit visible in ``cairn history``; all on the embedded store."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cairn.demo.agent_script import DEMO_AGENT_SCOPE, EDITED_LESSON, LESSON


def _cairn(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "cairn", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        timeout=300,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.onnx
def test_the_agent_demo_learns_recalls_and_edits_across_processes(tmp_path: Path) -> None:
    store = tmp_path / "demo.db"
    result = _cairn("demo-agent", "--fresh", "--store", str(store))
    assert result.returncode == 0, result.stderr
    out = result.stdout

    learned = re.search(r'"record_id": "(mem-[^"]+)", "version": 1', out)
    assert learned is not None
    record_id = learned.group(1)
    processes = re.findall(r"^\(process (\d+),", out, flags=re.MULTILINE)
    assert len(set(processes)) == 2  # learn and recall-and-edit ran in different processes

    after_learning = out.split("Process B", 1)[1]
    recalled_line = next(line for line in after_learning.splitlines() if "| - mem-" in line)
    assert record_id in recalled_line
    assert f"I learned that last time ({record_id})" in after_learning
    assert f"edited: {record_id} v2" in after_learning

    history = _cairn(
        "history",
        record_id,
        "--json",
        "--store",
        str(store),
        "--actor",
        DEMO_AGENT_SCOPE.actor_id,
        "--memory",
        DEMO_AGENT_SCOPE.memory_id,
    )
    versions = json.loads(history.stdout)["versions"]
    assert [v["content"] for v in versions] == [LESSON, EDITED_LESSON]
    assert [v["sources"][-1]["session_id"] for v in versions] == ["agent-demo-1", "agent-demo-2"]
    assert all(v["trust"] == "untrusted" for v in versions)
