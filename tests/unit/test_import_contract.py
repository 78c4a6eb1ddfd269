"""The layering in pyproject.toml ([tool.importlinter]) holds, and no module outgrows its room.

``lint-imports`` runs in ``make lint`` too; running it here puts the contract in ``make test``
(and so in CI): an import that runs upward, a feature that reaches a concrete backend, or a
boto3 import outside the AWS adapters fails the suite with the offending import chain.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "shared" / "cairn"
MAX_LINES = 300
# A module may be longer only if its docstring says why, in a sentence starting like this.
REASON = "Longer than 300 lines because"


def test_the_import_contract_holds() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run(  # noqa: S603 - the venv's own lint-imports
        [str(lint_imports), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_every_module_of_the_library_sits_in_a_layer() -> None:
    # import-linter leaves a module no layer names unconstrained: a new core module would
    # then be free to import anything.
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (layers,) = (
        contract["layers"]
        for contract in config["tool"]["importlinter"]["contracts"]
        if contract["type"] == "layers"
    )
    named = {name for layer in layers for name in re.split(r"[|:]", layer) if name.strip()}
    named = {name.strip() for name in named}
    outside = {"__init__", "__main__"}  # the package itself; __main__ only calls the CLI
    modules = {
        path.stem if path.is_file() else path.name
        for path in LIBRARY.iterdir()
        if (path.suffix == ".py" or (path / "__init__.py").exists()) and path.stem not in outside
    }
    assert modules - named == set(), f"name these in a layer of pyproject.toml: {modules - named}"


def test_no_module_is_over_300_lines_without_a_reason_in_its_docstring() -> None:
    unexplained = []
    for path in sorted(LIBRARY.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") <= MAX_LINES:
            continue
        docstring = ast.get_docstring(ast.parse(text)) or ""
        if REASON not in docstring:
            unexplained.append(f"{path.relative_to(ROOT)} ({text.count(chr(10))} lines)")
    assert not unexplained, (
        f"split these modules, or say in the docstring why not ('{REASON} ...'): {unexplained}"
    )
