"""Laying out the Lambda assets of `make lambda-assets`: ``python -m infra.lambda_assets``.

The Makefile installs the dependencies for the Lambda platform into one folder (``pip install
--target`` with ``--platform``/``--python-version``/``--only-binary``: wheels of the runtime's
Python, whatever Python runs the build). This lays out ``<out>/<fn>/`` for every
``functions/<fn>/handler.py``: those dependencies, the ``functions`` package (its
``__init__``, ``_common`` and the function itself), no ``__pycache__``, and ``<out>/manifest.json``
(the extras built in, the runtime's Python, whether bytecode was compiled, the functions), which
``infra.components.lambda_code`` reads before it lets a synth ship the folders.

Bytecode is compiled only by an interpreter of the runtime's version (``--compiler``, checked
by running it): bytecode of another version is ignored by Lambda's Python, so none is better
than that. Without one, the build says so and records ``"bytecode": false``: the functions work
the same and compile each module in memory at every cold start (``/var/task`` is read-only).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MANIFEST = "manifest.json"  # read by infra.components.lambda_code
# Lambda's limit on a function's code unzipped (layers included): "250 MB", 262,144,000 bytes.
UNZIPPED_LIMIT = 262_144_000
_MB = 2**20  # the megabyte of Lambda's quotas


class AssetBuildError(RuntimeError):
    """The dependencies or the functions to lay out are not what a function needs."""


@dataclass(frozen=True)
class Built:
    functions: tuple[str, ...]
    bytecode: bool
    largest_bytes: int  # the largest function folder, unzipped


def size_of(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def check_size(folder: Path, limit: int = UNZIPPED_LIMIT) -> int:
    """``folder``'s size unzipped; an ``AssetBuildError`` naming its largest parts when it is
    over Lambda's limit (a deploy would fail with it, after uploading)."""
    size = size_of(folder)
    if size > limit:
        parts = sorted(folder.iterdir(), key=lambda p: -size_of(p) if p.is_dir() else 0)[:5]
        largest = ", ".join(f"{p.name} {size_of(p) / _MB:.0f} MB" for p in parts)
        raise AssetBuildError(
            f"{folder} is {size / _MB:.0f} MB unzipped, over Lambda's {limit / _MB:.0f} MB: "
            f"its largest parts are {largest}"
        )
    return size


def handlers(functions: Path) -> tuple[str, ...]:
    """Every function: a ``functions/<fn>/handler.py`` whose folder is not private (``_``)."""
    return tuple(
        sorted(
            path.parent.name
            for path in functions.glob("*/handler.py")
            if not path.parent.name.startswith("_")
        )
    )


def runs_version(compiler: str, python: str) -> bool:
    """Whether ``compiler`` runs here and is Python ``python`` (``3.12``)."""
    try:
        found = subprocess.run(  # noqa: S603 - the build's own interpreter, from the Makefile
            [compiler, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return found.returncode == 0 and found.stdout.strip() == python


def build(
    *,
    deps: Path,
    functions: Path,
    out: Path,
    extras: Sequence[str],
    python: str,
    compiler: str,
    limit: int = UNZIPPED_LIMIT,
) -> Built:
    """Lay out ``out`` from ``deps`` and ``functions`` (replacing what was there)."""
    if not (deps / "cairn" / "__init__.py").is_file():
        raise AssetBuildError(
            f"{deps} holds no cairn package: the pip install step of `make lambda-assets` did "
            "not run or failed; run it again"
        )
    names = handlers(functions)
    if not names:
        raise AssetBuildError(f"no functions/<fn>/handler.py under {functions}")
    bytecode = runs_version(compiler, python)
    if out.exists():
        shutil.rmtree(out)
    try:
        sizes = [
            _lay_out(name, deps, functions, out, compiler if bytecode else None, limit)
            for name in names
        ]
    except AssetBuildError:
        shutil.rmtree(out, ignore_errors=True)  # no half-built assets for a synth to take
        raise
    (out / MANIFEST).write_text(
        json.dumps(
            {"extras": list(extras), "python": python, "bytecode": bytecode, "functions": names}
        ),
        encoding="utf-8",
    )
    return Built(functions=names, bytecode=bytecode, largest_bytes=max(sizes))


def _lay_out(
    name: str, deps: Path, functions: Path, out: Path, compiler: str | None, limit: int
) -> int:
    """``out/<name>``: the dependencies, the functions package, bytecode if ``compiler``;
    its size unzipped (``check_size``)."""
    folder = out / name
    shutil.copytree(deps, folder)
    package = folder / "functions"
    package.mkdir(exist_ok=True)
    if (functions / "__init__.py").is_file():
        shutil.copy2(functions / "__init__.py", package / "__init__.py")
    for part in ("_common", name):
        if (functions / part).is_dir():
            shutil.copytree(functions / part, package / part)
    for cache in list(folder.rglob("__pycache__")):
        shutil.rmtree(cache)
    if compiler is not None:
        _compile(compiler, folder)
    return check_size(folder, limit)


def _compile(compiler: str, folder: Path) -> None:
    """Compile ``folder`` with the runtime's interpreter; hashes, not timestamps, so a zip's
    file times never make Lambda's Python ignore the bytecode."""
    subprocess.run(  # noqa: S603 - the runtime's interpreter, checked by runs_version
        [
            compiler,
            "-m",
            "compileall",
            "-q",
            "-j",
            "0",
            "--invalidation-mode",
            "unchecked-hash",
            str(folder),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.lambda_assets", description=__doc__)
    parser.add_argument("--deps", type=Path, required=True)
    parser.add_argument("--functions", type=Path, default=Path("functions"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--extras", required=True, help="comma-separated cairn extras built in")
    parser.add_argument("--python", required=True, help="the Lambda runtime's version: 3.12")
    parser.add_argument("--compiler", help="an interpreter of that version (python<version>)")
    args = parser.parse_args(argv)
    compiler = args.compiler or f"python{args.python}"
    try:
        built = build(
            deps=args.deps,
            functions=args.functions,
            out=args.out,
            extras=[e for e in args.extras.split(",") if e],
            python=args.python,
            compiler=compiler,
        )
    except AssetBuildError as exc:
        print(f"lambda-assets: {exc}", file=sys.stderr)
        return 1
    for name in built.functions:
        print(f"built {args.out / name}")
    print(
        f"largest function: {built.largest_bytes / _MB:.0f} MB unzipped "
        f"(Lambda's limit: {UNZIPPED_LIMIT / _MB:.0f} MB)"
    )
    if not built.bytecode:
        print(
            f"lambda-assets: no Python {args.python} runs here ({compiler!r}): the assets ship "
            f"without bytecode, and Lambda compiles each module at every cold start. To ship "
            f"bytecode, install Python {args.python} or pass LAMBDA_COMPILER=<its path>.",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
