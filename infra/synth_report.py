"""What ``make synth`` tells the operator: where the template went, what cdk-nag found, and
whether the Lambda code in it is real (``infra.app.main`` prints it when run directly).

Both read what the synth wrote: the template and the CDK's ``validation-report.json`` (cdk-nag's
AwsSolutions verdict). A synth that cdk-nag fails names each open finding and the next step
instead of ending on the CDK's bare error; a placeholder synth says that CloudFormation refuses
the template by design, and how to deploy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from infra.settings import StackSettings

REPORT = "validation-report.json"


def _aws_solutions(outdir: Path) -> dict[str, Any] | None:
    path = outdir / REPORT
    if not path.is_file():
        return None
    reports = json.loads(path.read_text(encoding="utf-8")).get("pluginReports", [])
    return next((r for r in reports if r.get("pluginName") == "AwsSolutions"), None)


def open_findings(outdir: Path) -> list[str] | None:
    """cdk-nag's open findings (``rule at construct``); ``None`` when cdk-nag left no report."""
    report = _aws_solutions(outdir)
    if report is None:
        return None
    return [
        f"{v['ruleName']} at {c['constructPath']}"
        for v in report.get("violations", [])
        for c in v.get("violatingConstructs", [])
    ]


def nag_failed(outdir: Path, findings: list[str]) -> str:
    """The message of a synth cdk-nag failed: each open finding, then what to do."""
    listed = "".join(f"\n  - {finding}" for finding in findings)
    return (
        f"make synth: cdk-nag AwsSolutions found {len(findings)} open finding(s), so this "
        f"stack is not deployable:{listed}\nFix each resource, or acknowledge a finding with "
        "cdk_nag.NagSuppressions and a one-line reason beside it, then run make synth again "
        f"(details in {outdir / REPORT})."
    )


def synth_summary(outdir: Path, stack_name: str, settings: StackSettings) -> str:
    """Three lines: the template and its size, cdk-nag's verdict, and where the code is from."""
    template = outdir / f"{stack_name}.template.json"
    resources = json.loads(template.read_text(encoding="utf-8")).get("Resources", {})
    report = _aws_solutions(outdir) or {}
    acknowledged = len(report.get("suppressedViolations", []))
    if settings.lambda_code == "placeholder":
        code = (
            "Lambda code: placeholder (-c lambdaCode=placeholder). CloudFormation refuses this "
            "template by design; run make deploy to build the real code and deploy it."
        )
    else:
        code = f"Lambda code: the built assets in {settings.lambda_assets or 'build/lambda'}/."
    return "\n".join(
        [
            f"synthesized {template} ({len(resources)} resources)",
            f"cdk-nag AwsSolutions: no open findings; {acknowledged} acknowledged, each with "
            f"its reason ({outdir / REPORT}).",
            code,
        ]
    )
