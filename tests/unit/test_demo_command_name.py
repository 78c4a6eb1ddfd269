"""The demo's closing hints name the command as the user can run it from where they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.demo.processes import command_name


def _script(at: Path) -> Path:
    at.parent.mkdir(parents=True)
    at.write_text("#!/bin/sh\n", encoding="utf-8")
    at.chmod(0o755)
    return at


def test_after_make_demo_the_hint_is_the_venv_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = _script(tmp_path / ".venv" / "bin" / "cairn")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/nonexistent")
    assert command_name(str(script)) == ".venv/bin/cairn"


def test_an_installed_cairn_on_path_is_just_cairn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = _script(tmp_path / "bin" / "cairn")
    monkeypatch.setenv("PATH", str(script.parent))
    assert command_name(str(script)) == "cairn"


def test_run_as_a_module_the_hint_is_python_m_cairn() -> None:
    assert command_name("/somewhere/cairn/__main__.py") == "python -m cairn"
