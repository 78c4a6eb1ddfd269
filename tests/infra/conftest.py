"""One synth per test session: the real app's stacks, a variant, and a Lambda-defaults probe.

- ``DEFAULT_STACK``: through the app's entry point, with a customer-managed key (every KMS
  grant visible); ``DEFAULTS_STACK``: through the entry point with no setting at all, what
  ``cdk deploy`` deploys (AWS-managed encryption, no alarms); ``VARIANT_STACK``: every option.
  All are synthesized with ``lambdaCode=placeholder`` (no built assets in a test run).

Starting jsii and synthesizing costs seconds, so every infra test reads the templates and the
cdk-nag report that this single synth wrote. The stacks use
``DefaultStackSynthesizer(generate_bootstrap_version_rule=False)`` so the same templates deploy
into moto without an SSM bootstrap parameter (docs: shared/reference/moto-cdk.md §3).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# jsii prints a banner on every start under Node 20 unless this is set before it starts.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

PROBE_STACK = "LambdaDefaultsProbe"
DEFAULT_STACK = "Cairn"
DEFAULTS_STACK = "CairnDefaults"
VARIANT_STACK = "CairnOnnxAlarmed"
OFFLINE = {"lambdaCode": "placeholder"}
VARIANT = {
    "embedder": "onnx",
    "extraction_model_id": "us.anthropic.claude-3-5-haiku-20241022-v1:0",
    "retention_days": 7,
    "alarm_email": "ops@example.com",
    "encryption": "customer-key",
    "max_concurrency": 5,
    "lambda_code": "placeholder",
}


@dataclass(frozen=True)
class Synthesized:
    """What the session's one synth wrote: templates by stack name and the validation report."""

    outdir: Path
    templates: dict[str, dict[str, Any]]
    report: dict[str, Any]
    failure: str | None

    def template(self, stack: str) -> dict[str, Any]:
        return self.templates[stack]


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    pytest.importorskip("aws_cdk", reason="the CDK tests need aws-cdk-lib (dev extra)")
    pytest.importorskip("cdk_nag", reason="the CDK tests need cdk-nag (dev extra)")
    from aws_cdk import App, DefaultStackSynthesizer

    from infra.app import add_checks, build
    from infra.settings import StackSettings
    from infra.stack import CairnStack
    from tests.infra.probe import add_probe_stack

    outdir = tmp_path_factory.mktemp("cdk.out")
    app = App(
        outdir=str(outdir),
        context={"stackName": DEFAULT_STACK, "encryption": "customer-key", **OFFLINE},
    )
    # The default stacks go through the app's own entry point (settings from context).
    build(app, synthesizer=DefaultStackSynthesizer(generate_bootstrap_version_rule=False))
    CairnStack(
        app,
        DEFAULTS_STACK,
        settings=StackSettings.from_context({"lambdaCode": "placeholder"}.get),
        synthesizer=DefaultStackSynthesizer(generate_bootstrap_version_rule=False),
    )
    CairnStack(
        app,
        VARIANT_STACK,
        settings=StackSettings.model_validate(VARIANT),
        synthesizer=DefaultStackSynthesizer(generate_bootstrap_version_rule=False),
    )
    add_probe_stack(app, PROBE_STACK)
    add_checks(app)
    failure: str | None = None
    try:
        app.synth()
    except RuntimeError as exc:  # cdk-nag findings fail the synth; the files are still written
        failure = str(exc)
    templates = {
        name: json.loads((outdir / f"{name}.template.json").read_text())
        for name in (DEFAULT_STACK, DEFAULTS_STACK, VARIANT_STACK, PROBE_STACK)
    }
    report = json.loads((outdir / "validation-report.json").read_text())
    return Synthesized(outdir=outdir, templates=templates, report=report, failure=failure)
