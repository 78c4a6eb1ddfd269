"""``cairn --help`` and ``--version`` load no command body: no pydantic, numpy or model."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import cairn
from cairn.cli import args, jobs
from cairn.jobs import JobName
from cairn.models import SourceKind
from cairn.recall import query

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("pydantic", "numpy", "onnxruntime", "tokenizers", "cairn.models", "cairn.recall")


def _run(program: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own interpreter
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
        check=False,
    )


def test_help_builds_the_whole_parser_without_importing_any_command_body() -> None:
    program = (
        "import sys\n"
        "from cairn.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"loaded = sorted(m for m in sys.modules if m.startswith({HEAVY!r}))\n"
        "print('LOADED', loaded, file=sys.stderr)\n"
    )
    done = _run(program)
    assert "LOADED []" in done.stderr, done.stderr
    assert "remember" in done.stdout
    assert "mcp" in done.stdout
    assert "demo-phase" not in done.stdout


def test_version_is_the_packaged_one() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "cairn", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert done.returncode == 0
    assert done.stdout == f"cairn {project['version']}\n"
    assert cairn.__version__ == project["version"]


def test_the_parsers_copies_of_library_values_match_the_library() -> None:
    assert args.DEFAULT_TOP_K == query.DEFAULT_TOP_K
    assert args.MAX_TOP_K == query.MAX_TOP_K
    assert tuple(kind.value for kind in SourceKind) == args.SOURCE_KINDS
    assert tuple(job.value for job in JobName) == jobs.JOB_NAMES


# What `cairn remember`, the demos and the workers need, and a recall does not: an agent runs
# `cairn recall` once per turn, and a whole process pays for every module it imports.
NOT_FOR_RECALL = ("cairn.extract", "cairn.consolidate", "cairn.llm", "cairn.local.memory")


def test_recall_command_imports_only_the_recall_path(tmp_path: Path) -> None:
    from cairn.store.sqlite import SQLiteBackend

    store = tmp_path / "memory.db"
    SQLiteBackend(store).close()
    program = (
        "import sys\n"
        "from cairn.cli import main\n"
        f"status = main(['recall', '--store', {str(store)!r}, '--actor', 'u1', 'tea?'])\n"
        f"loaded = sorted(m for m in sys.modules if m.startswith({NOT_FOR_RECALL!r}))\n"
        "print('STATUS', status, 'LOADED', loaded, file=sys.stderr)\n"
    )
    done = _run(program)
    # The actor has nothing yet: the command ran its whole import path and refused politely.
    assert "STATUS 1 LOADED []" in done.stderr, done.stderr
    assert "nothing to recall" in done.stderr
