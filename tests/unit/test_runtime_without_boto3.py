"""The agent runtime installs without boto3: every module of ``cairn.runtime``, and every module
of the Telegram app but its DynamoDB state, imports in a fresh interpreter where importing
``boto3`` or ``botocore`` raises ``ImportError``, and none of them reaches an AWS adapter or
the Telegram app from the runtime.

Strands itself needs boto3 (it is a dependency of ``strands-agents``, not of cairn), so the
child imports ``strands`` first, then forgets boto3 and botocore before blocking them: a cairn
module that imported either would fail here.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

_CHILD = textwrap.dedent(
    """
    import importlib, importlib.abc, json, pkgutil, sys

    import strands.hooks, strands.tools.tools, strands.types.content, strands.types.tools

    BLOCKED = ("boto3", "botocore")
    for name in [n for n in sys.modules if n.split(".")[0] in BLOCKED]:
        del sys.modules[name]

    class BlockAws(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"{name} is not installed here")
            return None

    sys.meta_path.insert(0, BlockAws())

    def walk(package, skip=()):
        module = importlib.import_module(package)
        names = [package]
        for info in pkgutil.walk_packages(module.__path__, package + "."):
            if info.name not in skip:
                importlib.import_module(info.name)
                names.append(info.name)
        return names

    def loaded(*packages):
        inside = lambda n: any(n == p or n.startswith(p + ".") for p in packages)
        return sorted(n for n in sys.modules if inside(n))

    ADAPTERS = ("cairn.aws", "cairn.store.dynamodb")
    runtime = walk("cairn.runtime")
    after_runtime = loaded(*ADAPTERS, "cairn.telegram")
    telegram = walk("cairn.telegram", skip={"cairn.telegram.state_dynamodb"})
    after_telegram = loaded(*ADAPTERS)
    aws = sorted(n for n in sys.modules if n.split(".")[0] in BLOCKED)
    found = {"runtime": runtime, "telegram": telegram, "aws": aws}
    found.update(after_runtime=after_runtime, after_telegram=after_telegram)
    print(json.dumps(found))
    """
)


@pytest.fixture(scope="module")
def imported() -> dict[str, list[str]]:
    pytest.importorskip("strands")
    done = subprocess.run(  # noqa: S603 - our own interpreter, a fixed script
        [sys.executable, "-c", _CHILD], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, list[str]] = json.loads(done.stdout.splitlines()[-1])
    return found


def test_every_runtime_module_imports_with_boto3_and_botocore_blocked(
    imported: dict[str, list[str]],
) -> None:
    assert {
        "cairn.runtime.session",
        "cairn.runtime.agentcore",
        "cairn.runtime.strands_memory",
    } <= set(imported["runtime"])
    assert imported["aws"] == []


def test_the_runtime_reaches_neither_an_aws_adapter_nor_the_telegram_app(
    imported: dict[str, list[str]],
) -> None:
    assert imported["after_runtime"] == []


def test_only_the_dynamodb_state_of_the_telegram_app_needs_an_aws_adapter(
    imported: dict[str, list[str]],
) -> None:
    assert {"cairn.telegram.persona", "cairn.telegram.webhook"} <= set(imported["telegram"])
    assert imported["after_telegram"] == []
