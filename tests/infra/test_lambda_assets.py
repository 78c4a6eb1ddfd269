"""``make lambda-assets``' layout step (``infra.lambda_assets``), offline: every handler gets
its folder with the dependencies and the functions package, the manifest says what was built,
bytecode is compiled only by an interpreter of the runtime's version, and a build without the
installed dependencies refuses. A synth for deployment then takes the folders.

The dependencies here are a stand-in folder (the real ones come from PyPI in the Makefile's
pip step, which ``make test`` never runs); the functions are the repository's own.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from infra.components.lambda_code import LambdaCode
from infra.lambda_assets import UNZIPPED_LIMIT, AssetBuildError, build, handlers, main

REPO = Path(__file__).resolve().parents[2]
FUNCTIONS = REPO / "functions"
HOST = f"{sys.version_info.major}.{sys.version_info.minor}"


@pytest.fixture
def deps(tmp_path: Path) -> Path:
    folder = tmp_path / "deps"
    (folder / "cairn").mkdir(parents=True)
    (folder / "cairn" / "__init__.py").write_text('"""stand-in"""\n')
    (folder / "cairn" / "__pycache__").mkdir()
    (folder / "cairn" / "__pycache__" / "stale.pyc").write_bytes(b"old")
    return folder


def test_every_handler_is_laid_out_with_the_dependencies_and_the_manifest(
    deps: Path, tmp_path: Path
) -> None:
    out = tmp_path / "lambda"
    built = build(
        deps=deps, functions=FUNCTIONS, out=out, extras=["aws"], python="3.12", compiler="false"
    )

    expected = sorted(
        p.parent.name for p in FUNCTIONS.glob("*/handler.py") if p.parent.name[0] != "_"
    )
    assert list(built.functions) == expected == list(handlers(FUNCTIONS))
    assert {"api", "extraction", "consolidation", "sweep"} <= set(expected)
    for name in expected:
        folder = out / name
        assert (folder / "functions" / name / "handler.py").is_file()
        assert (folder / "functions" / "_common" / "wiring.py").is_file()
        assert (folder / "cairn" / "__init__.py").is_file()
        assert not list(folder.rglob("__pycache__"))  # no host bytecode, no stale bytecode
        others = {n for n in expected if n != name}
        assert not {p.name for p in (folder / "functions").iterdir()} & others
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest == {
        "extras": ["aws"],
        "python": "3.12",
        "bytecode": False,
        "functions": expected,
    }
    # What a synth for deployment checks before it ships the folders:
    code = LambdaCode(root=out, extras=frozenset({"aws"}))
    assert code.built_extras() == {"aws"}


def test_bytecode_is_compiled_only_by_an_interpreter_of_the_runtimes_version(
    deps: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    matching = tmp_path / "matching"
    assert build(
        deps=deps,
        functions=FUNCTIONS,
        out=matching,
        extras=["aws"],
        python=HOST,
        compiler=sys.executable,
    ).bytecode
    compiled = list((matching / "sweep" / "functions" / "sweep").rglob("handler.*.pyc"))
    assert [p.parent.name for p in compiled] == ["__pycache__"]
    assert compiled[0].name.startswith(f"handler.{sys.implementation.cache_tag}")

    other = tmp_path / "other"
    status = main(
        [
            *("--deps", str(deps), "--functions", str(FUNCTIONS), "--out", str(other)),
            *("--extras", "aws,onnx", "--python", "3.0", "--compiler", sys.executable),
        ]
    )
    assert status == 0
    assert not list(other.rglob("*.pyc"))
    assert json.loads((other / "manifest.json").read_text())["bytecode"] is False
    assert "no Python 3.0 runs here" in capsys.readouterr().err


def test_a_build_without_the_installed_dependencies_refuses_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "lambda"
    with pytest.raises(AssetBuildError, match="holds no cairn package"):
        build(
            deps=tmp_path / "empty",
            functions=FUNCTIONS,
            out=out,
            extras=["aws"],
            python="3.12",
            compiler="false",
        )
    assert not out.exists()
    status = main(
        ["--deps", str(tmp_path), "--out", str(out), "--extras", "aws", "--python", "3.12"]
    )
    assert status == 1
    assert "did not run or failed" in capsys.readouterr().err


def test_a_function_over_lambdas_unzipped_limit_refuses_and_leaves_no_assets(
    deps: Path, tmp_path: Path
) -> None:
    (deps / "heavy").mkdir()
    (deps / "heavy" / "blob.bin").write_bytes(b"\0" * 3 * 2**20)
    out = tmp_path / "lambda"

    with pytest.raises(
        AssetBuildError, match=r"over Lambda.s 2 MB: its largest parts are heavy 3 MB"
    ):
        build(
            deps=deps,
            functions=FUNCTIONS,
            out=out,
            extras=["aws"],
            python="3.12",
            compiler="false",
            limit=2 * 2**20,
        )
    assert not out.exists()  # nothing half-built for a synth to take
    assert UNZIPPED_LIMIT == 250 * 2**20  # "250 MB" on Lambda's quotas page: 262,144,000 bytes
