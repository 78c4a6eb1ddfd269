"""``cairn serve --provider openai``: the worked Ollama example, against a loopback model server.

The real command in a subprocess, the real boto3 client posting turns, and a loopback server
speaking OpenAI's chat completions API in Ollama's place (``tests/unit/model_server.py``): the
turns reach the model named on the command line, and its answer becomes a record.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.compat.conftest import boto3, point_clients_at, unique_name
from tests.unit.model_server import model_server

ACTOR = "user/a1"
# One exchange: `cairn serve` extracts every two messages.
TURNS = (("USER", "My office is in Porto."), ("ASSISTANT", "Noted."))
ANSWER = {
    "candidates": [
        {
            "content": "The user's office is in Porto.",
            "category": "fact",
            "confidence": 0.95,
            "evidence": [1],
        }
    ]
}


def _completion(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "llama3.2",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 400, "completion_tokens": 20, "total_tokens": 420},
    }


def _records(data_plane: Any, memory_id: str) -> list[str]:
    listed = data_plane.list_memory_records(memoryId=memory_id, namespace=f"/facts/{ACTOR}/")
    return [r["content"]["text"] for r in listed["memoryRecordSummaries"]]


def test_serve_extracts_with_the_openai_compatible_model_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with model_server() as model:
        model.reply(200, _completion(json.dumps(ANSWER)))
        # Formation may ask the model whether the candidate is new; it is.
        model.reply(200, _completion('{"decisions": [{"candidate": 1, "action": "create"}]}'))
        command = [
            *(sys.executable, "-m", "cairn", "serve", "--port", "0", "--embedder", "none"),
            *("--provider", "openai", "--model", "llama3.2", "--base-url", f"{model.url}/v1"),
            *("--store", str(tmp_path / "served.db")),
        ]
        env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        try:
            assert process.stdout is not None
            line = process.stdout.readline().strip()
            url = line.split("=", 1)[1].split()[0]
            point_clients_at(monkeypatch, url, tmp_path)
            session = boto3.session.Session()
            control = session.client("bedrock-agentcore-control")
            data_plane = session.client("bedrock-agentcore")
            memory_id = control.create_memory(
                name=unique_name(),
                eventExpiryDuration=30,
                memoryStrategies=[
                    {
                        "semanticMemoryStrategy": {
                            "name": "facts",
                            "namespaceTemplates": ["/facts/{actorId}/"],
                        }
                    }
                ],
            )["memory"]["id"]
            for offset, (role, text) in enumerate(TURNS):
                data_plane.create_event(
                    memoryId=memory_id,
                    actorId=ACTOR,
                    sessionId="s1",
                    eventTimestamp=1_767_258_000 + offset,
                    payload=[{"conversational": {"content": {"text": text}, "role": role}}],
                )
            # The extraction runs in the server's own worker thread, in another process: wait
            # for its record, bounded.
            deadline = time.monotonic() + 60
            while not (found := _records(data_plane, memory_id)) and time.monotonic() < deadline:
                time.sleep(0.2)
        finally:
            process.send_signal(signal.SIGINT)
            _, errors = process.communicate(timeout=30)

    assert found == ["The user's office is in Porto."], errors
    assert set(model.paths) == {"/v1/chat/completions"}
    assert model.requests[0]["model"] == "llama3.2"
    assert "My office is in Porto." in json.dumps(model.requests[0])
    assert process.returncode == 0, errors


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--provider", "openai"], "--provider openai needs --model"),
        (["--model", "llama3.2"], "--model needs --provider openai or bedrock"),
    ],
)
def test_an_incomplete_provider_choice_is_one_line_before_anything_opens(
    tmp_path: Path, options: list[str], said: str
) -> None:
    store = tmp_path / "served.db"
    done = subprocess.run(  # noqa: S603 - our own interpreter and arguments
        [sys.executable, "-m", "cairn", "serve", "--port", "0", "--store", str(store), *options],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")},
        check=False,
    )
    assert done.returncode == 2
    assert said in done.stderr
    assert not store.exists()
