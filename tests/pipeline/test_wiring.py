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
