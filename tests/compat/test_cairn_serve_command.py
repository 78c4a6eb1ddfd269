"""``cairn serve`` as a user runs it: a process that prints the export line, then serves."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.compat.conftest import boto3, point_clients_at, unique_name


def test_cairn_serve_prints_the_export_line_and_serves_real_clients(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "served.db"
    command = [sys.executable, "-m", "cairn", "serve", "--port", "0", "--embedder", "none"]
    process = subprocess.Popen(  # noqa: S603  # our own interpreter and arguments
        [*command, "--store", str(store)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "CAIRN_DEBUG": "1"},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        exports = dict(part.split("=", 1) for part in line.removeprefix("export ").split())
        url = exports["AWS_ENDPOINT_URL_BEDROCK_AGENTCORE"]
        assert exports["AWS_ENDPOINT_URL_BEDROCK_AGENTCORE_CONTROL"] == url
        assert url.startswith("http://127.0.0.1:")
        point_clients_at(monkeypatch, url, tmp_path)

        control = boto3.session.Session().client("bedrock-agentcore-control")
        memory_id = control.create_memory(name=unique_name(), eventExpiryDuration=7)["memory"]["id"]

        assert [m["id"] for m in control.list_memories()["memories"]] == [memory_id]
    finally:
        process.send_signal(signal.SIGINT)
        _, errors = process.communicate(timeout=30)
    assert process.returncode == 0, errors
    assert store.exists()
