"""Which model extraction and consolidation ask (``-c modelProvider``), told to the functions
and granted to their roles: the stack's side of the ``cairn`` command's ``--provider``.

- ``bedrock``: Converse with ``extractionModelId``; the roles may invoke exactly that model.
- ``openai``: an OpenAI-compatible server at ``modelBaseUrl`` serving ``extractionModelId``;
  no Bedrock permission for the model (the server must accept the functions' calls: they run
  outside any VPC and send no key).
- ``heuristic``: the offline rules (``cairn.local.offline_model``); no model call at all.

``functions/_common/wiring.py`` reads ``CAIRN_MODEL_PROVIDER`` and ``CAIRN_MODEL_BASE_URL``.
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
    }


def bedrock_models(settings: StackSettings) -> list[str]:
    """The Bedrock models extraction and consolidation call: the extraction model, or none."""
    return [settings.extraction_model_id] if settings.model_provider == "bedrock" else []


def invoke_statements(model_ids: list[str]) -> list[iam.PolicyStatement]:
    """``bedrock:InvokeModel`` on exactly these models; no statement when there are none."""
    return [bedrock_invoke_statement(model_ids)] if model_ids else []
