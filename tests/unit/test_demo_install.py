"""``make demo`` installs only what the demo runs on, and the demo runs on only that.

The Makefile's demo target installs the package with ``DEMO_EXTRAS`` (the local embedder), not
the development extras (moto, the CDK, Strands, mypy: the 1.1 GB a newcomer once waited for);
and ``cairn demo`` runs to its end in an interpreter where importing any package outside the
library and that extra raises ``ImportError``, so a new import of one would fail here.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What the development extras add and the demo must never need (import names).
DEV_ONLY = ("boto3", "botocore", "moto", "aws_cdk", "cdk_nag", "strands", "mcp", "mypy", "pytest")


def _requirement_names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=\[ ;]", r, maxsplit=1)[0].lower() for r in requirements}


def test_the_demo_target_installs_the_library_and_its_embedder_only() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^DEMO_EXTRAS \?= onnx$", makefile, flags=re.MULTILINE)
    assert re.search(r"^demo: \$\(DEMO_STAMP\)$", makefile, flags=re.MULTILINE)
    assert "-e '.[$(DEMO_EXTRAS)]'" in makefile
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    installed = _requirement_names(project["dependencies"])
    installed |= _requirement_names(project["optional-dependencies"]["onnx"])
    dev = _requirement_names(project["optional-dependencies"]["dev"])
    assert {"moto", "aws-cdk-lib", "mypy", "strands-agents", "pytest"} <= dev
    assert installed.isdisjoint({"moto", "aws-cdk-lib", "cdk-nag", "mypy", "strands-agents"})
    assert installed.isdisjoint({"boto3", "mcp", "pytest"})


@pytest.mark.slow
@pytest.mark.onnx
def test_cairn_demo_runs_without_any_development_package(tmp_path: Path) -> None:
    program = (
        "import sys\n"
        f"BLOCKED = {DEV_ONLY!r}\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in BLOCKED:\n"
        "            raise ImportError(f'{name} is not installed by make demo')\n"
        "        return None\n"
        "sys.meta_path.insert(0, Block())\n"
        "from cairn.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    store = tmp_path / "demo.db"
    done = subprocess.run(  # noqa: S603 - our own interpreter and arguments
        [sys.executable, "-c", program, "demo", "--store", str(store), "--fresh"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "is not installed by make demo" not in done.stderr
    assert "journal" in done.stdout or "jrn-" in done.stdout, done.stdout[-2000:]
