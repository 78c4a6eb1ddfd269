"""The embedding model's grant: with the default ``bedrock`` embedder, exactly the functions that
embed may invoke exactly Titan Text Embeddings V2 in the stack's region; with ``onnx``, nothing
may invoke an embedding model (the model runs inside the function)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.infra.conftest import DEFAULT_STACK, VARIANT_STACK, Synthesized

pytestmark = [pytest.mark.infra, pytest.mark.slow]

TITAN_V2 = (
    "arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/amazon.titan-embed-text-v2:0"
)
# Logical-id prefixes of the functions that embed: extraction (formation), the API (recall and
# batch writes), the Telegram webhook (recall) and the scheduled jobs (a reflection's insight).
EMBEDDING_FUNCTIONS = ("ExtractionExtract", "Api", "Telegram", "JobsRun")


def _rendered(value: Any) -> str:
    """A resource as text, CloudFormation references written ``${Name}``."""
    if isinstance(value, str):
        return value
    if "Ref" in value:
        return "${" + value["Ref"] + "}"
    if "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return str(separator).join(_rendered(part) for part in parts)
    return json.dumps(value)


def _invocable(template: dict[str, Any]) -> dict[str, set[str]]:
    """For each role: every resource it may ``bedrock:InvokeModel``."""
    found: dict[str, set[str]] = {}
    for resource in template["Resources"].values():
        if resource["Type"] != "AWS::IAM::Policy":
            continue
        for statement in resource["Properties"]["PolicyDocument"]["Statement"]:
            actions = statement["Action"]
            if "bedrock:InvokeModel" not in ([actions] if isinstance(actions, str) else actions):
                continue
            targets = statement["Resource"]
            for role in resource["Properties"]["Roles"]:
                found.setdefault(role["Ref"], set()).update(
                    _rendered(t) for t in (targets if isinstance(targets, list) else [targets])
                )
    return found


def _roles_of_functions(template: dict[str, Any], prefixes: tuple[str, ...]) -> set[str]:
    return {
        resource["Properties"]["Role"]["Fn::GetAtt"][0]
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Lambda::Function" and logical_id.startswith(prefixes)
    }


def test_extraction_may_invoke_exactly_titan_v2_in_the_stacks_region(
    synthesized: Synthesized,
) -> None:
    template = synthesized.template(DEFAULT_STACK)
    (extraction,) = _roles_of_functions(template, ("ExtractionExtract",))

    resources = _invocable(template)[extraction]

    assert TITAN_V2 in resources
    assert all("*" not in resource for resource in resources)
    titan = {resource for resource in resources if "titan" in resource}
    assert titan == {TITAN_V2}


def test_only_the_functions_that_embed_may_invoke_the_embedding_model(
    synthesized: Synthesized,
) -> None:
    template = synthesized.template(DEFAULT_STACK)
    embedding_roles = _roles_of_functions(template, EMBEDDING_FUNCTIONS)

    allowed = {role for role, resources in _invocable(template).items() if TITAN_V2 in resources}

    # A new function that embeds needs `bedrock_invoke_statement(self.embedding_models())`
    # in infra/stack.py; one that does not embed must not get it.
    assert allowed == embedding_roles


def test_an_onnx_deployment_may_invoke_no_embedding_model(synthesized: Synthesized) -> None:
    template = synthesized.template(VARIANT_STACK)

    invocable = set().union(*_invocable(template).values())

    assert invocable  # extraction still calls its model
    assert not any("titan-embed" in resource for resource in invocable)
    outputs = {name: output["Value"] for name, output in template["Outputs"].items()}
    assert outputs["Embedder"] == "onnx"


def test_the_stack_grants_the_model_ids_the_functions_embed_with() -> None:
    from cairn.embed import bedrock, onnx
    from infra.settings import EMBEDDING_MODEL_IDS

    assert EMBEDDING_MODEL_IDS == {"bedrock": bedrock.MODEL_ID, "onnx": onnx.MODEL_ID}
