"""``-c principalsFile``: the stack's principals document is validated at synth time and handed
to the api function as ``CAIRN_PRINCIPALS``, which the function's composition root reads
(``tests/pipeline/test_api_principals_lambda.py`` drives that function on moto)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cairn.api.principals import parse_principals, token_digest
from infra.principals import PRINCIPALS_ENV, PrincipalsFileError, principals_environment
from infra.settings import StackSettings

ARN = "arn:aws:sts::111122223333:assumed-role/app/*"


def test_a_document_becomes_the_functions_compact_json_and_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "principals.toml"
    path.write_text(f'[[principal]]\nname = "app"\niam_arn = "{ARN}"\nactors = ["t1:*"]\n')
    settings = StackSettings.from_context(
        lambda key: str(path) if key == "principalsFile" else None
    )

    environment = principals_environment(settings.principals_file)

    text = environment[PRINCIPALS_ENV]
    assert json.loads(text)["principal"][0]["iam_arn"] == ARN
    found = parse_principals(text, PRINCIPALS_ENV, toml=False).for_arn(ARN[:-1] + "s1")
    assert found is not None
    assert found.may_touch_actor("t1:alice")
    assert principals_environment(None) == {}


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ({"token_sha256": token_digest("t"), "actors": ["a"]}, "name each caller by iam_arn"),
        ({"iam_arn": ARN}, "needs actors or namespaces"),
        ({"iam_arn": ARN, "actors": [f"actor-{i:04d}" for i in range(400)]}, "bytes as compact"),
    ],
)
def test_a_document_the_stack_cannot_use_fails_the_synth_saying_why(
    tmp_path: Path, entry: dict[str, object], says: str
) -> None:
    path = tmp_path / "principals.json"
    path.write_text(json.dumps({"principal": [{"name": "app", **entry}]}))
    with pytest.raises(PrincipalsFileError, match="-c principalsFile") as caught:
        principals_environment(str(path))
    assert says in str(caught.value)
    with pytest.raises(PrincipalsFileError, match="cannot read"):
        principals_environment(str(tmp_path / "missing.json"))


@pytest.mark.infra
@pytest.mark.slow
def test_only_the_api_function_is_given_the_document(tmp_path: Path) -> None:
    pytest.importorskip("aws_cdk", reason="the CDK tests need aws-cdk-lib (dev extra)")
    from aws_cdk import App, DefaultStackSynthesizer
    from aws_cdk.assertions import Template

    from infra.stack import CairnStack

    path = tmp_path / "principals.json"
    document = {"principal": [{"name": "app", "iam_arn": ARN, "actors": ["t1:*"]}]}
    path.write_text(json.dumps(document))
    app = App(outdir=str(tmp_path / "cdk.out"))
    settings = StackSettings.from_context(
        {"lambdaCode": "placeholder", "principalsFile": str(path)}.get
    )
    stack = CairnStack(
        app,
        "CairnPrincipals",
        settings=settings,
        synthesizer=DefaultStackSynthesizer(generate_bootstrap_version_rule=False),
    )
    functions = Template.from_stack(stack).find_resources("AWS::Lambda::Function")
    given = {
        logical_id
        for logical_id, resource in functions.items()
        if PRINCIPALS_ENV in resource["Properties"].get("Environment", {}).get("Variables", {})
    }
    assert len(given) == 1
    assert next(iter(given)).startswith("ApiFunction")
    (api,) = (functions[lid] for lid in given)
    text = api["Properties"]["Environment"]["Variables"][PRINCIPALS_ENV]
    assert json.loads(text) == document
