"""Announcing staged rollouts on an SNS FIFO topic: the AWS ``Notifier``, client injected.

One publish per announcement, the body a ``cairn.rollout-notice/1`` (where to read the payload,
never what it says). FIFO attributes:

- ``MessageGroupId`` = a sha256 of the scope: one actor's rollouts are delivered in order and
  never two at once (an extraction never races another on the same scope), different actors in
  parallel; the digest keeps actor ids out of queue metrics and consoles.
- ``MessageDeduplicationId`` = the rollout id: announcing the same rollout again within SNS's
  five-minute window (a sweep finishing a release that crashed after publishing) delivers it
  once. A deliberate re-announcement comes later than that
  (``cairn.rollout.index.REDELIVER_AFTER``).
- message attribute ``kind`` = ``extraction`` or ``evidence``
  (``cairn.rollout.index.rollout_kind``):
  each queue's subscription filter takes only its kind (the extraction queue never sees a run's
  evidence, the consolidation queue never sees an extraction rollout).

The caller's role needs ``sns:Publish`` on the topic, and ``kms:GenerateDataKey`` /
``kms:Decrypt`` on its key. ``botocore`` errors are translated here, by code, always chained.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Protocol

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    NoCredentialsError,
    ReadTimeoutError,
)

from cairn.errors import (
    CairnError,
    ConfigurationError,
    InvalidInputError,
    StoreTimeoutError,
    StoreUnavailableError,
)
from cairn.models import Scope
from cairn.rollout.index import rollout_kind
from cairn.rollout.payload import RolloutNotice, encode_notice

# The message attribute subscriptions filter on (infra.components.fanout).
KIND_ATTRIBUTE = "kind"

_RETRYABLE_CODES = frozenset(
    {
        "Throttled",
        "ThrottlingException",
        "InternalError",
        "InternalFailure",
        "ServiceUnavailable",
        "KMSThrottling",
    }
)
_INVALID_CODES = frozenset({"InvalidParameter", "InvalidParameterValue", "ValidationError"})


class SNSClient(Protocol):
    def publish(self, **kwargs: Any) -> dict[str, Any]: ...


def message_group(scope: Scope) -> str:
    """The FIFO message group of a scope's rollouts: sha256 hex of ``[memory_id, actor_id]``."""
    material = json.dumps([scope.memory_id, scope.actor_id], separators=(",", ":"))
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


class SNSNotifier:
    """Publishes rollout notices on the FIFO topic ``topic_arn``."""

    def __init__(self, client: SNSClient, *, topic_arn: str) -> None:
        self._client = client
        self.topic_arn = topic_arn

    def announce(self, notice: RolloutNotice) -> None:
        """Publish ``notice``; a retryable ``CairnError`` if SNS did not take it."""
        kind = rollout_kind(notice.rollout_id)
        try:
            self._client.publish(
                TopicArn=self.topic_arn,
                Message=encode_notice(notice),
                MessageGroupId=message_group(notice.scope),
                MessageDeduplicationId=notice.rollout_id,
                MessageAttributes={KIND_ATTRIBUTE: {"DataType": "String", "StringValue": kind}},
            )
        except ClientError as exc:
            raise _translate(exc, self.topic_arn) from exc
        except (ConnectTimeoutError, ReadTimeoutError) as exc:
            raise StoreTimeoutError("SNS did not answer the publish in time; retry") from exc
        except NoCredentialsError as exc:
            raise ConfigurationError(
                "no AWS credentials were found for SNS; configure a profile, role or keys"
            ) from exc
        except BotoCoreError as exc:
            raise StoreUnavailableError(
                f"SNS is unreachable ({type(exc).__name__}); retry"
            ) from exc


def _translate(exc: ClientError, topic_arn: str) -> CairnError:
    code = str(exc.response.get("Error", {}).get("Code", ""))
    status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))
    if code in _RETRYABLE_CODES or status >= 500:
        return StoreUnavailableError(f"SNS is busy or failing (code {code}); retry the publish")
    if code in _INVALID_CODES:
        return InvalidInputError(
            f"SNS refused the notice as invalid (code {code}); check that {topic_arn!r} is a "
            "FIFO topic (its name ends in .fifo)"
        )
    return ConfigurationError(
        f"SNS refused the publish on {topic_arn!r} (code {code}); check the topic ARN and that "
        "the caller may publish to it and use its KMS key"
    )
