"""What ``make synth`` says: the template and its size, cdk-nag's verdict, that placeholder code
is refused by CloudFormation and how to deploy; and, when cdk-nag fails, each open finding and
what to do. Read from the session's one synth, and from a real ``python -m infra.app`` run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from infra.settings import StackSettings
from infra.synth_report import REPORT, nag_failed, open_findings, synth_summary
from tests.infra.conftest import DEFAULTS_STACK, Synthesized

pytestmark = [pytest.mark.infra, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


def test_the_summary_names_the_template_nags_verdict_and_the_placeholder_code(
    synthesized: Synthesized,
) -> None:
    settings = StackSettings.from_context({"lambdaCode": "placeholder"}.get)
    resources = len(synthesized.template(DEFAULTS_STACK)["Resources"])
    acknowledged = len(
        next(r for r in synthesized.report["pluginReports"] if r["pluginName"] == "AwsSolutions")[
            "suppressedViolations"
        ]
    )

    lines = synth_summary(synthesized.outdir, DEFAULTS_STACK, settings).splitlines()

    assert lines[0].endswith(f"{DEFAULTS_STACK}.template.json ({resources} resources)")
    assert lines[1].startswith(f"cdk-nag AwsSolutions: no open findings; {acknowledged} ")
    assert "CloudFormation refuses this template" in lines[2]
    assert "run make deploy" in lines[2]
    assert open_findings(synthesized.outdir) == []


def test_a_failed_nag_names_each_open_finding_and_what_to_do(tmp_path: Path) -> None:
    report = {
        "pluginReports": [
            {
                "pluginName": "AwsSolutions",
                "conclusion": "failure",
                "violations": [
                    {
                        "ruleName": "AwsSolutions-S10",
                        "violatingConstructs": [{"constructPath": "Cairn/Rollouts/Bucket"}],
                    }
                ],
                "suppressedViolations": [],
            }
        ]
    }
    (tmp_path / REPORT).write_text(json.dumps(report), encoding="utf-8")

    findings = open_findings(tmp_path)
    message = nag_failed(tmp_path, findings or [])

    assert findings == ["AwsSolutions-S10 at Cairn/Rollouts/Bucket"]
    assert "1 open finding(s)" in message
    assert "- AwsSolutions-S10 at Cairn/Rollouts/Bucket" in message
    assert "NagSuppressions and a one-line reason" in message
    assert open_findings(tmp_path / "nowhere") is None  # no report: not a nag failure


def test_make_synth_prints_what_it_made_on_stderr(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "shared")]),
        "CDK_CONTEXT_JSON": json.dumps({"lambdaCode": "placeholder"}),
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
    }
    env.pop("CDK_OUTDIR", None)
    done = subprocess.run(
        [sys.executable, "-m", "infra.app"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert "synthesized cdk.out/Cairn.template.json (" in done.stderr
    assert "cdk-nag AwsSolutions: no open findings" in done.stderr
    assert "Lambda code: placeholder" in done.stderr
    assert (tmp_path / "cdk.out" / "Cairn.template.json").is_file()
