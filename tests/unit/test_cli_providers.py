"""Choosing the model from the config file, the environment or flags, the flag winning.

``provider`` / ``model`` / ``base_url`` in ``cairn.toml``, ``CAIRN_PROVIDER`` / ``CAIRN_MODEL``
/ ``CAIRN_BASE_URL`` above it, ``--provider`` / ``--model`` / ``--base-url`` above both, as the
README says. Each chosen model is asked once through the loopback OpenAI-compatible server, so
what is checked is where the request went, for which model, with which key.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from cairn.cli.errors import UsageError
from cairn.cli.providers import add_provider_options, model_from
from cairn.llm.heuristic import HeuristicModel
from cairn.model_request import ModelMessage, ModelRequest
from tests.unit.model_server import ModelServer, model_server

REQUEST = ModelRequest(messages=(ModelMessage(role="user", text="hello"),), max_output_tokens=8)


def _reply(server: ModelServer) -> None:
    answer = {"role": "assistant", "content": "hi"}
    server.reply(200, {"choices": [{"index": 0, "message": answer, "finish_reason": "stop"}]})


def _args(*flags: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_provider_options(parser)
    return parser.parse_args(list(flags))


def _config(tmp_path: Path, url: str, model: str) -> dict[str, str]:
    path = tmp_path / "cairn.toml"
    path.write_text(
        f'provider = "openai"\nmodel = "{model}"\nbase_url = "{url}/config/v1"\n', encoding="utf-8"
    )
    return {"CAIRN_CONFIG": str(path)}


def _asked(server: ModelServer, args: argparse.Namespace, env: dict[str, str]) -> tuple[str, str]:
    _reply(server)
    model_from(args, env).complete(REQUEST)
    return server.paths[-1], str(server.requests[-1]["model"])


def test_the_config_file_chooses_then_the_environment_then_the_flags(tmp_path: Path) -> None:
    with model_server() as server:
        env = _config(tmp_path, server.url, "from-config")
        assert _asked(server, _args(), env) == ("/config/v1/chat/completions", "from-config")
        env |= {"CAIRN_MODEL": "from-env", "CAIRN_BASE_URL": f"{server.url}/env/v1"}
        assert _asked(server, _args(), env) == ("/env/v1/chat/completions", "from-env")
        flags = _args("--model", "from-flag", "--base-url", f"{server.url}/flag/v1")
        assert _asked(server, flags, env) == ("/flag/v1/chat/completions", "from-flag")
    # No key anywhere: no Authorization header sent.
    assert all("Authorization" not in h for h in server.headers)


def test_a_key_in_the_environment_is_sent_as_a_bearer_token(tmp_path: Path) -> None:
    with model_server() as server:
        env = _config(tmp_path, server.url, "llama3.2") | {"CAIRN_MODEL_API_KEY": "sk-local-1"}
        _asked(server, _args(), env)
    assert server.headers[-1]["Authorization"] == "Bearer sk-local-1"
    assert "sk-local-1" not in json.dumps(server.requests)


def test_a_flag_overrides_the_config_files_provider_and_bad_choices_say_what_to_do(
    tmp_path: Path,
) -> None:
    env = _config(tmp_path, "http://127.0.0.1:9", "llama3.2")
    with pytest.raises(UsageError, match="--model needs --provider openai or bedrock"):
        model_from(_args("--provider", "heuristic"), env)  # the file's model has no use there
    empty = tmp_path / "empty.toml"
    empty.write_text("", encoding="utf-8")
    nothing = {"CAIRN_CONFIG": str(empty)}
    with pytest.raises(UsageError, match="unknown model provider; choose one of"):
        model_from(_args(), nothing | {"CAIRN_PROVIDER": "ollama"})
    assert isinstance(model_from(_args(), nothing), HeuristicModel)  # nothing set: offline rules
