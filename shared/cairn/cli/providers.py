"""Which model extraction and consolidation ask: ``--provider``, ``--model``, ``--base-url``.

- ``heuristic`` (default): the offline rules (``cairn.local.offline_model``); no model at all.
- ``openai``: any OpenAI-compatible server (Ollama, vLLM, llama.cpp's ``llama-server``): the
  ``--model`` it serves at ``--base-url`` (default: Ollama's ``http://127.0.0.1:11434/v1``;
  ``--model-url`` is the same option, and either implies ``--provider openai``);
  ``CAIRN_MODEL_API_KEY`` is sent as a bearer token if set.
- ``bedrock``: Amazon Bedrock Converse with ``--model`` (default the stack's
  ``amazon.nova-lite-v1:0``), the caller's AWS credentials and region (the ``aws`` extra).

Each option falls back to ``CAIRN_PROVIDER`` / ``CAIRN_MODEL`` / ``CAIRN_BASE_URL``, then to
``provider`` / ``model`` / ``base_url`` in ``cairn.toml``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from cairn.cli.config import load_config
from cairn.cli.errors import UsageError

if TYPE_CHECKING:
    from cairn.ports import ModelProvider

PROVIDERS = ("heuristic", "openai", "bedrock")
OLLAMA_URL = "http://127.0.0.1:11434/v1"
BEDROCK_MODEL_ID = "amazon.nova-lite-v1:0"  # infra/settings.py DEFAULT_EXTRACTION_MODEL_ID
API_KEY_ENV = "CAIRN_MODEL_API_KEY"


def add_provider_options(parser: argparse.ArgumentParser) -> None:
    """``--provider``, ``--model`` and ``--base-url``, for the commands that extract."""
    group = parser.add_argument_group("the model that extracts records from conversations")
    group.add_argument(
        "--provider",
        choices=PROVIDERS,
        default=None,
        help="heuristic (offline rules, the default), openai (Ollama, vLLM, any "
        "OpenAI-compatible server) or bedrock (env CAIRN_PROVIDER)",
    )
    group.add_argument("--model", default=None, help="the model name (env CAIRN_MODEL)")
    group.add_argument(
        "--base-url",
        "--model-url",
        dest="base_url",
        default=None,
        help="the OpenAI-compatible server's API root; implies --provider openai (env "
        f"CAIRN_BASE_URL; default {OLLAMA_URL})",
    )


def _chosen(args: argparse.Namespace, environ: Mapping[str, str]) -> tuple[str, str | None, str]:
    config = load_config(environ)
    # A server URL named on the command line means that server (`--model-url` as before).
    implied = "openai" if args.base_url else None
    provider = (
        args.provider or implied or environ.get("CAIRN_PROVIDER") or config.provider or "heuristic"
    ).strip()
    if provider not in PROVIDERS:
        raise UsageError(f"unknown model provider; choose one of {', '.join(PROVIDERS)}")
    model = args.model or environ.get("CAIRN_MODEL") or config.model
    base_url = args.base_url or environ.get("CAIRN_BASE_URL") or config.base_url or OLLAMA_URL
    return provider, model, base_url


def model_from(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> ModelProvider:
    """The provider the options (or environment, or config file) select."""
    env = os.environ if environ is None else environ
    provider, model, base_url = _chosen(args, env)
    if provider == "heuristic":
        if model is not None:
            raise UsageError("--model needs --provider openai or bedrock; heuristic has no model")
        from cairn.local import offline_model

        return offline_model()
    if provider == "openai":
        if not model:
            raise UsageError(
                "--provider openai needs --model: the name the server serves, e.g. "
                "--model llama3.2 for Ollama"
            )
        from cairn.llm.openai_compat import OpenAICompatibleModel

        return OpenAICompatibleModel(base_url, model, api_key=env.get(API_KEY_ENV) or None)
    from cairn.llm.bedrock import BedrockModel, bedrock_runtime_client

    return BedrockModel(bedrock_runtime_client(), model or BEDROCK_MODEL_ID)
