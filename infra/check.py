"""Offline checks of every stack variant: ``python -m infra.check`` (``make check`` runs it).

Synthesizes the stack once per entry of ``VARIANTS`` (each a set of ``-c`` context values an
operator may deploy with), with placeholder code (``infra.components.lambda_code``: the
template refuses deployment, and no asset needs building), runs the cdk-nag AwsSolutions pack
over each (an unacknowledged finding fails) and cfn-lint over each template (an error fails;
``IGNORED`` lists the warnings that are not ours, each with its reason). Exit status 0 means
every variant is clean; nothing needs AWS or the network.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

VARIANTS: dict[str, dict[str, str]] = {
    "defaults": {},
    "customer-key": {"encryption": "customer-key"},
    "alarmed": {"alarmEmail": "ops@example.com"},
    "alarmed-customer-key": {"alarmEmail": "ops@example.com", "encryption": "customer-key"},
    "onnx-capped-metrics": {"embedder": "onnx", "maxConcurrency": "10", "metrics": "true"},
    "offline-model": {"modelProvider": "heuristic", "embedder": "onnx"},
    "model-server": {
        "modelProvider": "openai",
        "modelBaseUrl": "https://models.example.com/v1",
        "extractionModelId": "llama3.2",
        "modelApiKeySecret": (
            "arn:aws:secretsmanager:us-east-1:123456789012:secret:model-key-AbC123"
        ),
        "telegram": "true",
    },
    "telegram": {"telegram": "true", "alarmEmail": "ops@example.com"},
    "record-streaming": {
        "recordStreamArn": "arn:aws:kinesis:us-east-1:123456789012:stream/memory-records",
        "encryption": "customer-key",
        "alarmEmail": "ops@example.com",
    },
    "telegram-customer-key": {
        "telegram": "true",
        "encryption": "customer-key",
        "extractionModelId": "us.anthropic.claude-3-5-haiku-20241022-v1:0",
    },
}
# W3005: the CDK makes each function depend on its role's default policy as well as naming the
# role (it must: the policy has to exist before the function is invoked), which cfn-lint calls
# redundant.
IGNORED = ("W3005",)


def synthesize(name: str, context: dict[str, str], outdir: Path) -> tuple[Path, str | None]:
    """The variant's template (path) and cdk-nag's failure message, if any."""
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    from aws_cdk import App

    from infra.app import add_checks, build

    app = App(
        outdir=str(outdir),
        context={"stackName": f"Cairn-{name}", "lambdaCode": "placeholder", **context},
    )
    stack = build(app)
    add_checks(app)
    failure: str | None = None
    try:
        app.synth()
    except RuntimeError as exc:  # cdk-nag findings fail the synth; the template is written
        failure = str(exc)
    return outdir / f"{stack.stack_name}.template.json", failure


def lint(template: Path) -> list[Any]:
    """cfn-lint's errors and warnings on ``template``, without the ``IGNORED`` rules."""
    from cfnlint.api import ManualArgs, lint_file

    matches = lint_file(template, ManualArgs(ignore_checks=list(IGNORED)))
    return [m for m in matches if m.rule.id[0] in "EW"]


def main() -> int:
    failed = 0
    with tempfile.TemporaryDirectory() as root:
        for name, context in VARIANTS.items():
            outdir = Path(root) / name
            template, nag = synthesize(name, context, outdir)
            findings = lint(template)
            status = "ok" if nag is None and not findings else "FAILED"
            print(
                f"{name:24} cdk-nag: {'clean' if nag is None else 'FAILED'}; "
                f"cfn-lint: {len(findings)} finding(s): {status}"
            )
            if nag is not None:
                print(nag, file=sys.stderr)
            for finding in findings:
                print(f"  {finding}", file=sys.stderr)
            failed += status != "ok"
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
