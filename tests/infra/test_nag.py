"""cdk-nag AwsSolutions: no open finding anywhere, and every acknowledged one says why."""

from __future__ import annotations

from typing import Any

import pytest

from tests.infra.conftest import Synthesized

pytestmark = [pytest.mark.infra, pytest.mark.slow]


def aws_solutions(synthesized: Synthesized) -> dict[str, Any]:
    reports: list[dict[str, Any]] = synthesized.report["pluginReports"]
    (report,) = (r for r in reports if r["pluginName"] == "AwsSolutions")
    return report


def describe(violations: list[dict[str, Any]]) -> list[str]:
    return [
        f"{v['ruleName']} at {c['constructPath']}: {v['description']}"
        for v in violations
        for c in v["violatingConstructs"]
    ]


def test_the_synth_passes_the_aws_solutions_checks(synthesized: Synthesized) -> None:
    report = aws_solutions(synthesized)

    assert describe(report["violations"]) == []
    assert report["conclusion"] == "success"
    assert synthesized.failure is None


def test_every_acknowledged_finding_carries_a_one_line_reason(synthesized: Synthesized) -> None:
    acknowledged = aws_solutions(synthesized)["suppressedViolations"]

    # The bucket's access-log finding is always acknowledged: proof the checks really ran.
    assert any(v["ruleName"] == "AwsSolutions-S1" for v in acknowledged)
    for violation in acknowledged:
        reason = violation["reason"].strip()
        assert len(reason) >= 20, describe([violation])
        assert "\n" not in reason, describe([violation])
