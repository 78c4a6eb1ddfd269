"""Which model extraction and consolidation ask (``-c modelProvider``), told to the functions
and granted to their roles: the stack's side of the ``cairn`` command's ``--provider``.

- ``bedrock``: Converse with ``extractionModelId``; the roles may invoke exactly that model.
- ``openai``: an OpenAI-compatible server at ``modelBaseUrl`` serving ``extractionModelId``;
  no Bedrock permission for the model (the functions run outside any VPC). With
  ``modelApiKeySecret``, the functions that ask the model may read exactly that secret
  (``secretsmanager:GetSecretValue`` on its ARN, nothing else) and send its string as a bearer
  token; without it they send no key.
- ``heuristic``: the offline rules (``cairn.local.offline_model``); no model call at all.

The Telegram webhook answers through the same provider (``-c telegramModelId`` names its model).
``functions/_common/wiring.py`` reads ``CAIRN_MODEL_PROVIDER``, ``CAIRN_MODEL_BASE_URL`` and
``CAIRN_MODEL_API_KEY_SECRET`` (the key itself only at a cold start, through Powertools).
"""

from __future__ import annotations

from aws_cdk import aws_iam as iam

from infra.components.extraction import bedrock_invoke_statement
from infra.settings import StackSettings


def model_environment(settings: StackSettings) -> dict[str, str]:
    """The variables that tell a function which provider to build."""
    return {
        "CAIRN_MODEL_PROVIDER": settings.model_provider,
        "CAIRN_MODEL_BASE_URL": settings.model_base_url or "",
        "CAIRN_MODEL_API_KEY_SECRET": settings.model_api_key_secret or "",
    }


def bedrock_models(settings: StackSettings, model_id: str | None = None) -> list[str]:
    """The Bedrock models a function asking ``model_id`` (default: the extraction model) calls:
    that model under the ``bedrock`` provider, or none."""
    wanted = model_id or settings.extraction_model_id
    return [wanted] if settings.model_provider == "bedrock" else []


def api_key_statements(settings: StackSettings) -> list[iam.PolicyStatement]:
    """Reading the model server's API key: GetSecretValue on exactly that secret, or nothing."""
    if settings.model_api_key_secret is None:
        return []
    return [
        iam.PolicyStatement(
            actions=["secretsmanager:GetSecretValue"],
            resources=[settings.model_api_key_secret],
        )
    ]


def invoke_statements(model_ids: list[str]) -> list[iam.PolicyStatement]:
    """``bedrock:InvokeModel`` on exactly these models; no statement when there are none."""
    return [bedrock_invoke_statement(model_ids)] if model_ids else []
