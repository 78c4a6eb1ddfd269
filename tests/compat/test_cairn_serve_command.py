"""``cairn serve`` as a user runs it: a process that prints the export line, then serves."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.compat.conftest import boto3, point_clients_at, unique_name
from tests.unit.model_server import model_server


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


def _completion(content: str) -> dict[str, object]:
    # A non-streamed chat completion as an Ollama server returns it.
    return {
        "object": "chat.completion",
        "model": "llama3.1:8b",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320},
    }


def test_cairn_serve_extracts_with_a_local_model_server_given_model_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    extracted = '{"candidates": [{"content": "The user keeps bees.", "category": "fact", ' + (
        '"confidence": 0.8, "evidence": [1]}]}'
    )
    with model_server() as model:
        model.reply(200, _completion(extracted))
        model.reply(200, _completion('{"decisions": [{"candidate": 1, "action": "create"}]}'))
        process = subprocess.Popen(  # noqa: S603  # our own interpreter and arguments
            [
                *(sys.executable, "-m", "cairn", "serve", "--port", "0", "--embedder", "none"),
                *("--model-url", f"{model.url}/v1", "--model", "llama3.1:8b"),
                *("--store", str(tmp_path / "served.db")),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdout is not None
            line = process.stdout.readline().strip()
            url = line.removeprefix("export ").split()[0].split("=", 1)[1]
            point_clients_at(monkeypatch, url, tmp_path)
            session = boto3.session.Session()
            memory_id = session.client("bedrock-agentcore-control").create_memory(
                name=unique_name(),
                eventExpiryDuration=7,
                memoryStrategies=[
                    {
                        "semanticMemoryStrategy": {
                            "name": "facts",
                            "namespaces": ["/facts/{actorId}/"],
                        }
                    }
                ],
            )["memory"]["id"]
            data = session.client("bedrock-agentcore")
            for role, text in (("USER", "We have two hives out back."), ("ASSISTANT", "Nice!")):
                data.create_event(
                    memoryId=memory_id,
                    actorId="a1",
                    sessionId="s1",
                    eventTimestamp=1_767_258_000,
                    payload=[{"conversational": {"content": {"text": text}, "role": role}}],
                )
            # The server's worker thread extracts in the background: wait for it, bounded.
            deadline = time.monotonic() + 30
            records: list[dict[str, object]] = []
            while not records and time.monotonic() < deadline:
                records = data.list_memory_records(memoryId=memory_id)["memoryRecordSummaries"]
                time.sleep(0.1)
        finally:
            process.send_signal(signal.SIGINT)
            _, errors = process.communicate(timeout=30)

    assert [r["content"] for r in records] == [{"text": "The user keeps bees."}]
    assert model.paths[0] == "/v1/chat/completions"
    assert model.requests[0]["model"] == "llama3.1:8b"
    assert "We have two hives out back." in str(model.requests[0]["messages"])
    assert process.returncode == 0, errors
