"""The functions' composition root: what a misdeployed function says, and warm-start reuse."""

from __future__ import annotations

import pytest

from cairn.errors import ConfigurationError
from functions._common import wiring
from tests.pipeline.aws import Deployment


def test_a_function_deployed_without_its_environment_names_what_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    names = Deployment(*("x",) * 8).environment()
    for name, value in names.items():
        monkeypatch.setenv(name, value)
    for name in ("CAIRN_ITEMS_TABLE", "CAIRN_ROLLOUT_TOPIC_ARN"):
        monkeypatch.delenv(name)
    wiring.configure()

    with pytest.raises(
        ConfigurationError, match="lacks CAIRN_ITEMS_TABLE, CAIRN_ROLLOUT_TOPIC_ARN;"
    ):
        wiring.pipeline()


def test_adapters_are_built_once_per_container(deployment: Deployment) -> None:
    assert wiring.pipeline() is wiring.pipeline()
    assert wiring.consumer().rollouts is wiring.pipeline().rollouts


def _environment(monkeypatch: pytest.MonkeyPatch, **overrides: str) -> None:
    for name, value in {**Deployment(*("x",) * 8).environment(), **overrides}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")


def test_a_bedrock_deployment_embeds_with_titan_v2_within_a_bounded_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cairn.embed.bedrock import BedrockEmbedder

    _environment(
        monkeypatch,
        CAIRN_EMBEDDER="bedrock",
        CAIRN_EMBEDDING_MODEL_ID="amazon.titan-embed-text-v2:0",
    )
    wiring.configure()
    try:
        built = wiring.embedder()
    finally:
        wiring.configure()

    assert isinstance(built, BedrockEmbedder)
    # Built at all means its client's read timeout is within the embedder's bound.
    assert built.identity.key == "amazon.titan-embed-text-v2:0@1024"


def test_an_embedder_the_library_does_not_know_is_named_with_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _environment(monkeypatch, CAIRN_EMBEDDER="openai")
    wiring.configure()
    try:
        with pytest.raises(ConfigurationError, match="-c embedder=bedrock or onnx"):
            wiring.embedder()
    finally:
        wiring.configure()


def test_a_stack_with_aws_managed_encryption_stages_under_the_buckets_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _environment(monkeypatch, CAIRN_KMS_KEY_ID="")
    wiring.configure()
    try:
        staging = wiring.staging()
    finally:
        wiring.configure()

    assert staging.kms_key_id == ""  # no SSE-KMS header: the bucket's SSE-S3 applies


def test_the_sweep_loads_neither_extraction_nor_consolidation_at_import() -> None:
    import subprocess
    import sys

    script = (
        "import sys, functions.sweep.handler; "
        "print(sorted(m for m in sys.modules if m.startswith(('cairn.consolidate', "
        "'cairn.extract.delivery', 'cairn.extract.extractor'))))"
    )
    loaded = subprocess.run(  # noqa: S603 - this interpreter, a fixed script
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.strip()

    assert loaded == "[]"  # a shorter cold start: only what the sweep uses
