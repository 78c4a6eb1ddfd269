"""Who may touch recall index objects (``recall-index/*`` in the rollout bucket): the functions
that recall or erase (the API; the Telegram webhook when deployed) read, rewrite and delete
them; extraction, the sweep and consolidation never recall, and get nothing there."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.infra.conftest import DEFAULT_STACK, Synthesized

pytestmark = [pytest.mark.infra, pytest.mark.slow]

INDEX_OBJECTS = "/recall-index/*"


def _grants_on_index_objects(template: dict[str, Any]) -> dict[str, set[str]]:
    """Function logical-id prefix -> the actions its role has on recall index objects."""
    resources = template["Resources"]
    roles = {
        r["Properties"]["Role"]["Fn::GetAtt"][0]: lid
        for lid, r in resources.items()
        if r["Type"] == "AWS::Lambda::Function" and "Role" in r["Properties"]
    }
    found: dict[str, set[str]] = {lid: set() for lid in roles.values()}
    for policy in (r for r in resources.values() if r["Type"] == "AWS::IAM::Policy"):
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            if INDEX_OBJECTS not in json.dumps(statement["Resource"]):
                continue
            actions = statement["Action"]
            for role in policy["Properties"]["Roles"]:
                function = roles.get(role["Ref"])
                if function is not None:
                    found[function] |= {actions} if isinstance(actions, str) else set(actions)
    return found


def test_only_the_functions_that_recall_or_erase_touch_index_objects(
    synthesized: Synthesized,
) -> None:
    grants = _grants_on_index_objects(synthesized.template(DEFAULT_STACK))

    (api,) = [actions for lid, actions in grants.items() if lid.startswith("ApiFunction")]
    assert api == {"s3:GetObject", "s3:PutObject", "s3:DeleteObject"}
    others = {lid: actions for lid, actions in grants.items() if not lid.startswith("Api")}
    assert others  # extraction, sweep, consolidation, ...
    assert all(not actions for actions in others.values()), others
