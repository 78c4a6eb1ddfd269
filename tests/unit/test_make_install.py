"""``make install`` without pipx or uv (``INSTALLER=venv``, what ``auto`` falls back to): a
virtual environment under a temporary home, ``cairn`` linked into its ``~/.local/bin``, and
that command remembering and recalling with the real ONNX model. It downloads the package's
dependencies from the index, so it runs only by hand: ``CAIRN_TEST_NETWORK=1 pytest
tests/unit/test_make_install.py``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.network, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(
    os.environ.get("CAIRN_TEST_NETWORK") != "1",
    reason="downloads from the package index; run by hand with CAIRN_TEST_NETWORK=1",
)
def test_make_install_puts_a_working_cairn_on_the_users_bin(tmp_path: Path) -> None:
    make = shutil.which("make")
    assert make is not None, "make is needed"
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CAIRN_", "XDG_"))},
        "HOME": str(home),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
    }
    python = f"PYTHON={sys.executable}"

    def install() -> subprocess.CompletedProcess[str]:
        return subprocess.run(  # noqa: S603 - make with our own targets
            [make, "-C", str(REPO), "install", "INSTALLER=venv", python],
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )

    first, again = install(), install()  # a second install replaces the first in place

    assert first.returncode == 0, first.stderr
    assert again.returncode == 0, again.stderr
    command = home / ".local" / "bin" / "cairn"
    venv = home / ".local" / "share" / "cairn" / "venv"
    assert command.resolve() == (venv / "bin" / "cairn").resolve()
    assert f"{command} is cairn " in again.stderr
    assert "is not on PATH; add it" in again.stderr
    store = ["--store", str(tmp_path / "m.db"), "--actor", "sam"]
    run = {"env": env, "capture_output": True, "text": True, "timeout": 300, "check": True}
    subprocess.run([str(command), "remember", "Sam keeps bees", *store], **run)  # noqa: S603
    found = subprocess.run([str(command), "recall", "bees", *store], **run)  # noqa: S603
    assert "Sam keeps bees" in found.stdout
