"""Where each function's code comes from, and the refusal to deploy a function without it.

``make lambda-assets`` (run by ``make deploy``) builds ``build/lambda/<fn>/``: the function's
package, ``cairn`` with the extras the embedder needs, and their dependencies for the Lambda
platform, plus ``build/lambda/manifest.json`` naming those extras. A synth for deployment
(``cdk deploy``, ``cdk synth``, CDK context ``lambdaCode=build``, the default) takes each folder
with ``Code.from_asset`` and refuses, naming what to run, when a folder is missing or was built
without an extra the stack needs (``onnx`` for ``-c embedder=onnx``).

Offline checks (``make synth``, ``make check``, the test suite) synthesize with
``-c lambdaCode=placeholder``: each function gets an inline handler that raises, and the
template gets a CloudFormation rule whose assertion is false, so CloudFormation itself refuses
to create or update a stack from that template: placeholder code can never be deployed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from aws_cdk import Aws, CfnRule, CfnRuleAssertion, Fn, Stack
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from infra.lambda_assets import MANIFEST

ASSET_ROOT = Path(__file__).resolve().parents[2] / "build" / "lambda"
PLACEHOLDER_RULE = "RefusePlaceholderCode"
_PLACEHOLDER = (
    "def lambda_handler(event, context):\n"
    "    raise RuntimeError('cairn: synthesized with -c lambdaCode=placeholder; deploy with "
    "make deploy')\n"
)


class LambdaAssetsError(RuntimeError):
    """A synth for deployment found no built code, or code built without a needed extra."""


@dataclass(frozen=True)
class LambdaCode:
    """How functions get code: built folders under ``root`` or (``placeholder``) inline stubs
    the template refuses to deploy; ``extras`` are the cairn extras the built code must hold."""

    root: Path = ASSET_ROOT
    placeholder: bool = False
    extras: frozenset[str] = frozenset({"aws"})

    def code(self, scope: Construct, name: str) -> tuple[lambda_.Code, str]:
        """The code and handler of ``functions/<name>/handler.py::lambda_handler``."""
        if self.placeholder:
            _refuse_deploy(Stack.of(scope))
            return lambda_.Code.from_inline(_PLACEHOLDER), "index.lambda_handler"
        folder = self.root / name
        if not (folder / "functions" / name / "handler.py").is_file():
            raise LambdaAssetsError(
                f"no built code for the {name!r} function in {folder}: run `make deploy` (it "
                "builds the assets, then deploys) or `make lambda-assets`; offline checks "
                "synthesize with -c lambdaCode=placeholder"
            )
        built = self.built_extras()
        if not self.extras <= built:
            missing = ", ".join(sorted(self.extras - built))
            raise LambdaAssetsError(
                f"the assets in {self.root} were built without the {missing} extra this stack "
                f"needs: run `make deploy EMBEDDER=onnx` or `make lambda-assets "
                f"LAMBDA_EXTRAS={','.join(sorted(self.extras))}`"
            )
        return lambda_.Code.from_asset(str(folder)), f"functions.{name}.handler.lambda_handler"

    def built_extras(self) -> frozenset[str]:
        """The extras ``make lambda-assets`` recorded in the manifest (none if it has none)."""
        manifest = self.root / MANIFEST
        if not manifest.is_file():
            return frozenset()
        extras = json.loads(manifest.read_text(encoding="utf-8")).get("extras", [])
        return frozenset(str(extra) for extra in extras)


def _refuse_deploy(stack: Stack) -> None:
    """A rule CloudFormation evaluates before creating or updating anything: false in every
    account (an account id is 12 digits)."""
    if stack.node.try_find_child(PLACEHOLDER_RULE) is not None:
        return
    CfnRule(
        stack,
        PLACEHOLDER_RULE,
        assertions=[
            CfnRuleAssertion(
                assert_=Fn.condition_equals(Aws.ACCOUNT_ID, "lambdaCode=placeholder"),
                assert_description="This template was synthesized with -c lambdaCode=placeholder "
                "(offline checks): its functions have no code. Deploy with make deploy.",
            )
        ],
    )
