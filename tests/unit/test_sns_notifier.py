"""Announcing on the SNS FIFO topic: grouped by a digest of the scope, deduplicated by the
rollout id, and every AWS failure reported as the cairn error that says what to do."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from cairn.aws.sns_notifier import SNSNotifier, message_group
from cairn.errors import ConfigurationError, InvalidInputError, StoreUnavailableError
from cairn.models import Scope
from cairn.rollout.payload import RolloutNotice, decode_notice

boto3 = pytest.importorskip("boto3")
moto = pytest.importorskip("moto")
Stubber = pytest.importorskip("botocore.stub").Stubber

SCOPE = Scope(memory_id="support-bot", actor_id="tg:12345")
TOPIC = "arn:aws:sns:us-east-1:123456789012:cairn-rollouts.fifo"
NOTICE = RolloutNotice.of(SCOPE, "ro-1", "rollouts/abc/ro-1")


@pytest.fixture
def aws() -> Iterator[Any]:
    with moto.mock_aws():
        yield boto3.session.Session(
            aws_access_key_id="testing",
            aws_secret_access_key="testing",  # noqa: S106 - moto's fake credentials
            region_name="us-east-1",
        )


def _topic_with_queue(aws: Any) -> tuple[str, str]:
    sns, sqs = aws.client("sns"), aws.client("sqs")
    topic = sns.create_topic(
        Name="cairn-rollouts.fifo",
        Attributes={"FifoTopic": "true", "ContentBasedDeduplication": "false"},
    )["TopicArn"]
    url = sqs.create_queue(QueueName="extraction.fifo", Attributes={"FifoQueue": "true"})[
        "QueueUrl"
    ]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]
    sns.subscribe(
        TopicArn=topic,
        Protocol="sqs",
        Endpoint=arn["QueueArn"],
        Attributes={"RawMessageDelivery": "true"},
    )
    return topic, url


def test_a_notice_is_delivered_once_grouped_by_a_digest_of_the_scope(aws: Any) -> None:
    topic, url = _topic_with_queue(aws)
    notifier = SNSNotifier(aws.client("sns"), topic_arn=topic)

    notifier.announce(NOTICE)
    notifier.announce(NOTICE)  # a sweep finishing a crashed release

    messages = aws.client("sqs").receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"]
    )["Messages"]
    assert len(messages) == 1
    attributes = messages[0]["Attributes"]
    assert attributes["MessageGroupId"] == message_group(SCOPE)
    assert attributes["MessageDeduplicationId"] == "ro-1"
    assert "tg:12345" not in attributes["MessageGroupId"]
    notice = decode_notice(messages[0]["Body"])
    assert (notice.scope, notice.rollout_id, notice.staging_key) == (
        SCOPE,
        "ro-1",
        "rollouts/abc/ro-1",
    )


def test_the_publish_keeps_the_shape_the_queue_filters_and_fifo_dedup_rely_on() -> None:
    client = boto3.session.Session(
        aws_access_key_id="testing",
        aws_secret_access_key="testing",  # noqa: S106 - fake credentials for the stub
        region_name="us-east-1",
    ).client("sns")
    evidence = RolloutNotice.of(SCOPE, "ev-7", "rollouts/abc/ev-7")
    expected = [
        (
            NOTICE,
            '{"actor_id":"tg:12345","memory_id":"support-bot","rollout_id":"ro-1",'
            '"schema":"cairn.rollout-notice/1","staging_key":"rollouts/abc/ro-1"}',
            "extraction",
        ),
        (
            evidence,
            '{"actor_id":"tg:12345","memory_id":"support-bot","rollout_id":"ev-7",'
            '"schema":"cairn.rollout-notice/1","staging_key":"rollouts/abc/ev-7"}',
            "evidence",
        ),
    ]
    with Stubber(client) as stub:
        for notice, body, kind in expected:
            stub.add_response(
                "publish",
                {"MessageId": "m-1"},
                {
                    "TopicArn": TOPIC,
                    "Message": body,
                    "MessageGroupId": message_group(SCOPE),
                    "MessageDeduplicationId": notice.rollout_id,
                    "MessageAttributes": {"kind": {"DataType": "String", "StringValue": kind}},
                },
            )
        notifier = SNSNotifier(client, topic_arn=TOPIC)
        for notice, _, _ in expected:
            notifier.announce(notice)
        stub.assert_no_pending_responses()


def test_scopes_are_different_message_groups() -> None:
    other = Scope(memory_id="support-bot", actor_id="tg:67890")

    assert message_group(SCOPE) != message_group(other)
    assert len(message_group(SCOPE)) <= 128  # the FIFO limit


@pytest.mark.parametrize(
    ("code", "status", "error", "retryable"),
    [
        ("Throttled", 400, StoreUnavailableError, True),
        ("InternalError", 500, StoreUnavailableError, True),
        ("KMSThrottling", 400, StoreUnavailableError, True),
        ("NotFound", 404, ConfigurationError, False),
        ("AuthorizationError", 403, ConfigurationError, False),
        ("InvalidParameter", 400, InvalidInputError, False),
    ],
)
def test_aws_failures_become_cairn_errors_by_code(
    code: str, status: int, error: type[Exception], retryable: bool
) -> None:
    client = boto3.session.Session(
        aws_access_key_id="testing",
        aws_secret_access_key="testing",  # noqa: S106 - fake credentials for the stub
        region_name="us-east-1",
    ).client("sns")
    with Stubber(client) as stub:
        stub.add_client_error("publish", service_error_code=code, http_status_code=status)
        with pytest.raises(error) as raised:
            SNSNotifier(client, topic_arn=TOPIC).announce(NOTICE)

    assert raised.value.retryable is retryable  # type: ignore[attr-defined]
    assert "tg:12345" not in str(raised.value)
