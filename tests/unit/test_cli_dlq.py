"""``cairn dlq list|redrive`` against dead-letter queues on moto.

The queues are FIFO pairs as the stack makes them (infra/components/fanout.py), and a notice
reaches the dead-letter queue the way it does in the stack: SQS moves it there after its work
queue's ``maxReceiveCount`` failed receives. The stack's outputs name the queues, as
``cairn dlq --stack`` reads them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from botocore.exceptions import ReadTimeoutError
from moto import mock_aws

from cairn.aws import dead_letters
from cairn.aws.dead_letters import DeadLetterQueue
from cairn.cli.main import main
from cairn.errors import StoreTimeoutError, StoreUnavailableError
from cairn.models import Scope
from cairn.rollout.payload import RolloutNotice, encode_notice

SCOPE = Scope(memory_id="m1", actor_id="tg:1")
ROLLOUT = "ro-0001"


@dataclass
class Queues:
    sqs: Any
    work: str
    dead: str


@pytest.fixture
def queues(monkeypatch: pytest.MonkeyPatch) -> Iterator[Queues]:
    for name, value in (
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_DEFAULT_REGION", "us-east-1"),
    ):
        monkeypatch.setenv(name, value)
    with mock_aws():
        sqs = boto3.client("sqs")
        fifo = {"FifoQueue": "true"}
        dead = sqs.create_queue(QueueName="cairn-dead.fifo", Attributes=fifo)["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=dead, AttributeNames=["QueueArn"])
        redrive = {"deadLetterTargetArn": arn["Attributes"]["QueueArn"], "maxReceiveCount": 1}
        work = sqs.create_queue(
            QueueName="cairn-work.fifo", Attributes={**fifo, "RedrivePolicy": json.dumps(redrive)}
        )["QueueUrl"]
        template = {
            "Resources": {"Unused": {"Type": "AWS::SQS::Queue"}},
            "Outputs": {
                "ExtractionDeadLetterQueueUrl": {"Value": dead},
                "ExtractionQueueUrl": {"Value": work},
            },
        }
        boto3.client("cloudformation").create_stack(
            StackName="cairn", TemplateBody=json.dumps(template)
        )
        yield Queues(sqs, work, dead)


def fail_twice(queues: Queues, body: str, dedup: str) -> None:
    """Send ``body`` to the work queue and let two deliveries fail: SQS dead-letters it."""
    queues.sqs.send_message(
        QueueUrl=queues.work,
        MessageBody=body,
        MessageGroupId="group-1",
        MessageDeduplicationId=dedup,
        MessageAttributes={"kind": {"DataType": "String", "StringValue": "extraction"}},
    )
    for _ in range(2):
        queues.sqs.receive_message(QueueUrl=queues.work, VisibilityTimeout=0)


def notice() -> str:
    return encode_notice(RolloutNotice.of(SCOPE, ROLLOUT, "rollouts/abc/ro-0001.json"))


def drain(queues: Queues, url: str) -> list[dict[str, Any]]:
    return queues.sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=0, AttributeNames=["All"]
    ).get("Messages", [])


def test_a_dead_letter_is_listed_without_its_content_and_stays_there(
    queues: Queues, capsys: pytest.CaptureFixture[str]
) -> None:
    fail_twice(queues, notice(), ROLLOUT)
    fail_twice(queues, "private text someone else published", "other-1")

    status = main(["dlq", "list", "--stack", "cairn"])

    out = capsys.readouterr().out
    assert status == 0
    assert f"extraction {ROLLOUT} received 2 times" in out
    assert "(not a cairn notice)" in out
    assert "waiting   2 messages" in out
    assert "private" not in out
    assert "rollouts/abc" not in out  # the body is never printed
    assert len(drain(queues, queues.dead)) == 2  # listing left them, visible


def test_a_redrive_moves_each_dead_letter_back_once_and_a_second_moves_nothing(
    queues: Queues, capsys: pytest.CaptureFixture[str]
) -> None:
    fail_twice(queues, notice(), ROLLOUT)
    urls = ["--dead-letter-url", queues.dead, "--queue-url", queues.work]

    first = main(["dlq", "redrive", *urls])
    second = main(["dlq", "redrive", *urls])

    out = capsys.readouterr().out
    assert (first, second) == (0, 0)
    assert "redriven  1 messages" in out
    assert "redriven  0 messages" in out
    (moved,) = drain(queues, queues.work)
    assert moved["Body"] == notice()
    assert moved["Attributes"]["MessageGroupId"] == "group-1"
    assert moved["Attributes"]["MessageDeduplicationId"] == ROLLOUT
    assert drain(queues, queues.dead) == []


def test_a_redrive_interrupted_after_its_send_sends_nothing_twice(
    queues: Queues, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The delete fails after the work queue took the message (a crash between the two): the
    next redrive finds it in the dead-letter queue again, and its send is deduplicated by the
    rollout id."""
    fail_twice(queues, notice(), ROLLOUT)
    monkeypatch.setattr(dead_letters, "REDRIVE_HIDDEN_FOR", 0)  # visible again at once
    lost: list[int] = []

    def lose_the_delete(**_: Any) -> None:
        if not lost:
            lost.append(1)
            raise ReadTimeoutError(endpoint_url="https://sqs")

    queues.sqs.meta.events.register("before-call.sqs.DeleteMessage", lose_the_delete)
    queue = DeadLetterQueue(queues.sqs, dead_letter_url=queues.dead, queue_url=queues.work)

    with pytest.raises((StoreUnavailableError, StoreTimeoutError)):
        queue.redrive()
    again = queue.redrive()

    assert lost == [1]
    assert again == 1
    assert len(drain(queues, queues.work)) == 1
    assert drain(queues, queues.dead) == []


def test_without_a_stack_or_both_urls_nothing_is_read(
    queues: Queues, capsys: pytest.CaptureFixture[str]
) -> None:
    fail_twice(queues, notice(), ROLLOUT)

    status = main(["dlq", "redrive", "--dead-letter-url", queues.dead])

    assert status == 1
    assert "pass --stack NAME, or both --dead-letter-url and --queue-url" in capsys.readouterr().err
    assert len(drain(queues, queues.dead)) == 1


def test_a_stack_that_does_not_exist_is_a_clear_error(
    queues: Queues, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["dlq", "list", "--stack", "not-cairn"])

    assert status == 1
    assert "no stack 'not-cairn'" in capsys.readouterr().err
