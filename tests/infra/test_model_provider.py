"""``-c modelProvider`` (the stack's ``--provider``): the functions are told which model to
ask, and only a Bedrock provider may invoke the extraction model; a server's API key is read
from exactly the secret ``-c modelApiKeySecret`` names, by exactly the functions that ask the
model (the Telegram webhook among them, which answers through the same provider); a half-given
choice is refused naming the key; the deployed composition root builds what the stack names."""

from __future__ import annotations

import json
from typing import Any

import pytest

from infra.settings import SettingsError, StackSettings
from tests.infra.conftest import DEFAULTS_STACK, Synthesized
from tests.infra.test_embedding_grants import _invocable, _roles_of_functions

pytestmark = [pytest.mark.infra, pytest.mark.slow]

NOVA = "arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/amazon.nova-lite-v1:0"
MODEL_FUNCTIONS = ("ExtractionExtract", "ConsolidationConsolidate")
KEY_SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:cairn/model-key-AbC123"  # noqa: S105 - an ARN
OFFLINE = {"lambdaCode": "placeholder", "modelProvider": "heuristic", "embedder": "onnx"}
SERVER = {
    "lambdaCode": "placeholder",
    "modelProvider": "openai",
    "modelBaseUrl": "https://models.example.com/v1",
    "extractionModelId": "llama3.2",
    "modelApiKeySecret": KEY_SECRET,
    "telegram": "true",
    "telegramModelId": "qwen2.5:7b-instruct",
}


def _environments(template: dict[str, Any], prefixes: tuple[str, ...]) -> list[dict[str, Any]]:
    return [
        resource["Properties"]["Environment"]["Variables"]
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Lambda::Function" and logical_id.startswith(prefixes)
    ]


@pytest.fixture(scope="module")
def providers(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], ...]:
    """One synth of an offline-model stack and an OpenAI-compatible one, cdk-nag included."""
    from aws_cdk import App, DefaultStackSynthesizer

    from infra.app import add_checks
    from infra.stack import CairnStack

    outdir = tmp_path_factory.mktemp("providers.out")
    app = App(outdir=str(outdir))
    for name, context in (("CairnOffline", OFFLINE), ("CairnServer", SERVER)):
        CairnStack(
            app,
            name,
            settings=StackSettings.from_context(context.get),
            synthesizer=DefaultStackSynthesizer(generate_bootstrap_version_rule=False),
        )
    add_checks(app)
    app.synth()  # raises on any open cdk-nag finding
    read = lambda name: json.loads((outdir / f"{name}.template.json").read_text())  # noqa: E731
    return read("CairnOffline"), read("CairnServer")


def test_the_default_stack_asks_bedrock_and_may_invoke_exactly_its_model(
    synthesized: Synthesized,
) -> None:
    template = synthesized.template(DEFAULTS_STACK)
    for variables in _environments(template, MODEL_FUNCTIONS):
        assert variables["CAIRN_MODEL_PROVIDER"] == "bedrock"
        assert variables["CAIRN_MODEL_BASE_URL"] == ""
    invocable = _invocable(template)
    for role in _roles_of_functions(template, MODEL_FUNCTIONS):
        assert NOVA in invocable[role]


def test_an_offline_or_server_model_gets_no_bedrock_model_permission(
    providers: tuple[dict[str, Any], ...],
) -> None:
    offline, server = providers
    assert {v["CAIRN_MODEL_PROVIDER"] for v in _environments(offline, MODEL_FUNCTIONS)} == {
        "heuristic"
    }
    assert {
        (v["CAIRN_MODEL_PROVIDER"], v["CAIRN_MODEL_BASE_URL"], v["CAIRN_EXTRACTION_MODEL_ID"])
        for v in _environments(server, MODEL_FUNCTIONS)
    } == {("openai", "https://models.example.com/v1", "llama3.2")}
    # Offline model and ONNX embedder: neither function may invoke any Bedrock model.
    assert _roles_of_functions(offline, MODEL_FUNCTIONS).isdisjoint(_invocable(offline))
    invocable = _invocable(server)
    for role in _roles_of_functions(server, MODEL_FUNCTIONS):
        assert not any("llama" in arn or "nova" in arn for arn in invocable.get(role, set()))


def _secret_readers(template: dict[str, Any]) -> dict[str, list[Any]]:
    """For each role: the resources of its ``secretsmanager:GetSecretValue`` statements."""
    found: dict[str, list[Any]] = {}
    for resource in template["Resources"].values():
        if resource["Type"] != "AWS::IAM::Policy":
            continue
        for statement in resource["Properties"]["PolicyDocument"]["Statement"]:
            actions = statement["Action"]
            if "secretsmanager:GetSecretValue" not in (
                [actions] if isinstance(actions, str) else actions
            ):
                continue
            for role in resource["Properties"]["Roles"]:
                found.setdefault(role["Ref"], []).append(statement["Resource"])
    return found


def test_the_server_key_is_read_from_exactly_its_secret_by_exactly_the_model_callers(
    synthesized: Synthesized, providers: tuple[dict[str, Any], ...]
) -> None:
    _, server = providers
    assert {v["CAIRN_MODEL_API_KEY_SECRET"] for v in _environments(server, MODEL_FUNCTIONS)} == {
        KEY_SECRET
    }
    readers = _secret_readers(server)
    callers = _roles_of_functions(server, (*MODEL_FUNCTIONS, "TelegramWebhook"))
    for role in callers:
        assert KEY_SECRET in readers[role]  # the ARN itself: no wildcard, no other secret
    (webhook,) = _roles_of_functions(server, ("TelegramWebhook",))
    assert len(readers[webhook]) == 2  # its key and its own bot secret, nothing else
    for role, resources in readers.items():
        if role not in callers:
            assert KEY_SECRET not in resources
    # Without the setting nothing reads a key, and the variable is empty.
    default = synthesized.template(DEFAULTS_STACK)
    assert _secret_readers(default) == {}
    assert {v["CAIRN_MODEL_API_KEY_SECRET"] for v in _environments(default, MODEL_FUNCTIONS)} == {
        ""
    }


def test_the_telegram_bot_answers_through_the_server_and_may_invoke_no_chat_model(
    providers: tuple[dict[str, Any], ...],
) -> None:
    _, server = providers
    (variables,) = _environments(server, ("TelegramWebhook",))
    assert variables["CAIRN_MODEL_PROVIDER"] == "openai"
    assert variables["CAIRN_MODEL_BASE_URL"] == "https://models.example.com/v1"
    assert variables["CAIRN_TELEGRAM_MODEL_ID"] == "qwen2.5:7b-instruct"
    (webhook,) = _roles_of_functions(server, ("TelegramWebhook",))
    invocable = _invocable(server).get(webhook, set())
    assert not any("qwen" in arn or "nova" in arn or "llama" in arn for arn in invocable)
    assert all("titan-embed" in arn for arn in invocable)  # it still embeds with Titan v2


@pytest.mark.parametrize(
    ("context", "named"),
    [
        ({"modelProvider": "openai", "extractionModelId": "llama3.2"}, "-c modelBaseUrl=https://"),
        (
            {"modelProvider": "openai", "modelBaseUrl": "https://models.example.com/v1"},
            "-c extractionModelId=NAME",
        ),
        ({"modelBaseUrl": "https://models.example.com/v1"}, "only with -c modelProvider=openai"),
        (
            {**SERVER, "modelBaseUrl": "http://models.example.com/v1"},
            "-c modelBaseUrl: String should match pattern",
        ),
        ({"modelProvider": "ollama"}, "-c modelProvider: Input should be"),
        ({"modelApiKeySecret": KEY_SECRET}, "only with -c modelProvider=openai"),
        (
            {**SERVER, "modelApiKeySecret": "cairn/model-key"},  # a name: the grant needs the ARN
            "-c modelApiKeySecret: String should match pattern",
        ),
        ({"modelProvider": "heuristic", "telegram": "true"}, "the offline rules only extract"),
    ],
)
def test_a_half_given_provider_is_refused_naming_the_key(
    context: dict[str, str], named: str
) -> None:
    with pytest.raises(SettingsError, match="invalid stack properties") as refused:
        StackSettings.from_context(context.get)
    assert named in str(refused.value)


def test_the_deployed_composition_root_builds_the_provider_the_stack_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cairn.llm.bedrock import BedrockModel
    from cairn.llm.heuristic import HeuristicModel
    from cairn.llm.openai_compat import OpenAICompatibleModel
    from functions._common import wiring

    base = {
        "CAIRN_ITEMS_TABLE": "items",
        "CAIRN_EVENTS_TABLE": "events",
        "CAIRN_ROLLOUT_BUCKET": "bucket",
        "CAIRN_ROLLOUT_TOPIC_ARN": "arn:aws:sns:us-east-1:123456789012:t.fifo",
        "CAIRN_EMBEDDER": "onnx",
        "CAIRN_EXTRACTION_MODEL_ID": "llama3.2",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    built = {}
    for provider, url in (("heuristic", ""), ("openai", SERVER["modelBaseUrl"]), ("", "")):
        for name, value in {
            **base,
            "CAIRN_MODEL_PROVIDER": provider,
            "CAIRN_MODEL_BASE_URL": url,
        }.items():
            monkeypatch.setenv(name, value)
        wiring.configure()  # nothing injected: what a deployed function builds
        built[provider] = wiring.model()
    wiring.configure()
    assert isinstance(built["heuristic"], HeuristicModel)
    assert isinstance(built["openai"], OpenAICompatibleModel)
    assert isinstance(built[""], BedrockModel)  # stacks older than the setting: Bedrock
