"""The CDK app entry point (``cdk.json``: ``python -m infra.app``; ``make synth`` runs it too).

Stack properties come from CDK context (``cdk deploy -c embedder=onnx``; see
``infra.settings``). Every synth runs the cdk-nag AwsSolutions checks: an unacknowledged
finding fails the synth, and with it ``cdk deploy``. A synth needs the built Lambda assets
(``make deploy`` builds them) unless it is told ``-c lambdaCode=placeholder`` (offline checks:
``make synth``, ``make stack-check``), whose template CloudFormation refuses to deploy.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from aws_cdk import App, IStackSynthesizer, Validations
from cdk_nag import AwsSolutionsChecks

from infra.settings import StackSettings
from infra.stack import CairnStack
from infra.synth_report import nag_failed, open_findings, synth_summary

DEFAULT_STACK_NAME = "Cairn"


def add_checks(app: App) -> None:
    """Run the cdk-nag AwsSolutions pack over everything in ``app`` at synth."""
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))


def build(app: App, *, synthesizer: IStackSynthesizer | None = None) -> CairnStack:
    """Add the cairn stack configured from ``app``'s context (``stackName`` names it)."""
    settings = StackSettings.from_context(app.node.try_get_context)
    name = app.node.try_get_context("stackName") or DEFAULT_STACK_NAME
    return CairnStack(app, name, settings=settings, synthesizer=synthesizer)


def main() -> None:
    # Run by the CDK CLI, CDK_OUTDIR says where to write; run directly (make synth), cdk.out,
    # and say what was made (infra.synth_report): the CLI reports for itself.
    direct = "CDK_OUTDIR" not in os.environ
    outdir = Path("cdk.out")
    app = App(outdir=str(outdir) if direct else None)
    stack = build(app)
    add_checks(app)
    try:
        app.synth()
    except RuntimeError:
        findings = open_findings(outdir) if direct else None
        if findings:  # cdk-nag failed the synth (the CDK's own error names no next step)
            sys.exit(nag_failed(outdir, findings))
        raise
    if direct:
        print(synth_summary(outdir, stack.stack_name, stack.settings), file=sys.stderr)


if __name__ == "__main__":
    main()
