"""The synthesized template deployed into moto, driven by the real backends.

What a first deploy must prove end to end: the tables the template creates are the tables
``DynamoDBBackend`` expects (keys and indexes from the one schema), a staged payload round-trips
through the bucket under the stack's key, and a rollout notification reaches every worker queue
in order. TTL, PITR, public-access blocks, lifecycle rules and resource policies are not
reproduced by moto; the template tests pin those.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from cairn.changes import Create, RecordPatch, Retract, Revise
from cairn.clock import FixedClock
from cairn.errors import SnapshotConflictError
from cairn.models import Scope, Source, SourceKind
from cairn.store.dynamodb.schema import TABLES, create_table_request
from tests.conformance.samples import event_input, new_fact
from tests.infra.conftest import DEFAULT_STACK, DEFAULTS_STACK, Synthesized
from tests.infra.moto_deploy import Deployed, deploy

pytestmark = [
    pytest.mark.infra,
    pytest.mark.slow,
    # moto warns once per resource type its CloudFormation skips (subscriptions, policies).
    pytest.mark.filterwarnings("ignore:Tried to parse AWS::"),
]

boto3 = pytest.importorskip("boto3")
moto = pytest.importorskip("moto")

SCOPE = Scope(memory_id="support-bot", actor_id="tg:12345")
USER = Source(kind=SourceKind.USER, event_id="ev-1", session_id="s1")


@pytest.fixture(scope="module")
def aws() -> Iterator[Any]:
    """A boto3 session inside one moto mock that lasts for the module."""
    session = boto3.session.Session(
        aws_access_key_id="testing",
        aws_secret_access_key="testing",  # noqa: S106 - moto's fake credentials
        region_name="us-east-1",
    )
    with moto.mock_aws():
        yield session


@pytest.fixture(scope="module")
def deployed(aws: Any, synthesized: Synthesized) -> Deployed:
    return deploy(aws, synthesized.outdir, DEFAULT_STACK)


def test_the_synthesized_stack_deploys_with_every_output(deployed: Deployed) -> None:
    assert deployed.status == "CREATE_COMPLETE"
    assert {"ItemsTableName", "EventsTableName", "RolloutBucketName", "KeyArn"} <= set(
        deployed.outputs
    )


def test_the_deployed_tables_have_the_keys_and_indexes_of_the_shared_schema(
    aws: Any, deployed: Deployed
) -> None:
    dynamodb = aws.client("dynamodb")
    names = {
        "items": deployed.outputs["ItemsTableName"],
        "events": deployed.outputs["EventsTableName"],
    }

    for schema in TABLES:
        table = dynamodb.describe_table(TableName=names[schema.logical_name])["Table"]
        expected = create_table_request(schema, names[schema.logical_name])
        assert table["KeySchema"] == expected["KeySchema"]
        assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
        assert sorted(i["IndexName"] for i in table.get("GlobalSecondaryIndexes", [])) == sorted(
            i["IndexName"] for i in expected.get("GlobalSecondaryIndexes", [])
        )
        assert sorted(i["IndexName"] for i in table.get("LocalSecondaryIndexes", [])) == sorted(
            i["IndexName"] for i in expected.get("LocalSecondaryIndexes", [])
        )


def test_a_scopes_records_are_written_read_and_applied_atomically(
    aws: Any, deployed: Deployed
) -> None:
    from cairn.store.dynamodb import DynamoDBBackend

    stores = DynamoDBBackend(
        aws.client("dynamodb"),
        items_table=deployed.outputs["ItemsTableName"],
        events_table=deployed.outputs["EventsTableName"],
        clock=FixedClock(),
    ).stores()
    tea, city = stores.records.apply(
        SCOPE,
        [
            Create(record=new_fact("Prefers green tea", sources=(USER,))),
            Create(record=new_fact("Lives in Lisbon", sources=(USER,))),
        ],
    )

    with pytest.raises(SnapshotConflictError):
        stores.records.apply(
            SCOPE,
            [Retract(record_id=tea.record_id), Retract(record_id=city.record_id)],
            snapshot={tea.record_id: tea.version, city.record_id: city.version + 1},
        )
    assert [v.record_id for v in stores.records.list_records(SCOPE).items] == sorted(
        [tea.record_id, city.record_id]
    )

    revised, retracted = stores.records.apply(
        SCOPE,
        [
            Revise(record_id=tea.record_id, patch=RecordPatch(content="Prefers jasmine tea")),
            Retract(record_id=city.record_id),
        ],
        snapshot={tea.record_id: tea.version, city.record_id: city.version},
    )
    assert stores.records.get(SCOPE, tea.record_id).content == "Prefers jasmine tea"
    assert [v.version for v in stores.records.history(SCOPE, tea.record_id)] == [1, 2]
    assert [v.record_id for v in stores.records.list_records(SCOPE).items] == [tea.record_id]
    assert revised.version == 2
    assert retracted.status == "retracted"

    appended = stores.events.append(SCOPE, event_input("s1"))
    listed = stores.events.list_events(SCOPE, "s1").items
    assert [e.event_id for e in listed] == [appended.event_id]


def test_a_staged_payload_round_trips_under_the_stacks_kms_key(
    aws: Any, deployed: Deployed
) -> None:
    from cairn.aws.s3_staging import S3StagingStore

    s3 = aws.client("s3")
    bucket = deployed.outputs["RolloutBucketName"]
    staging = S3StagingStore(s3, bucket=bucket, kms_key_id=deployed.outputs["KeyArn"])
    payload = json.dumps({"events": ["I moved to Lisbon"]}).encode()

    key = staging.put(SCOPE, "ro-1", payload)

    assert staging.get(SCOPE, "ro-1") == payload
    head = s3.head_object(Bucket=bucket, Key=key)
    assert head["ServerSideEncryption"] == "aws:kms"
    assert head["SSEKMSKeyId"] == deployed.outputs["KeyArn"]


def test_a_published_rollout_reaches_its_kinds_worker_queue_in_order(
    aws: Any, deployed: Deployed
) -> None:
    sns, sqs = aws.client("sns"), aws.client("sqs")
    group = "scope-" + "0" * 32  # producers use the scope digest, never the actor id
    published = {
        "ExtractionQueueUrl": [f"ro-{n}" for n in range(1, 4)],
        "ConsolidationQueueUrl": [f"ev-{n}" for n in range(1, 3)],
    }
    interleaved = ["ro-1", "ev-1", "ro-2", "ev-2", "ro-3"]
    for rollout_id in interleaved:
        kind = "evidence" if rollout_id.startswith("ev-") else "extraction"
        sns.publish(
            TopicArn=deployed.outputs["RolloutTopicArn"],
            Message=json.dumps({"rollout_id": rollout_id}),
            MessageGroupId=group,
            MessageDeduplicationId=rollout_id,
            MessageAttributes={"kind": {"DataType": "String", "StringValue": kind}},
        )

    for queue, expected in published.items():
        url = deployed.outputs[queue]
        messages = sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["MessageGroupId"]
        )["Messages"]
        assert [json.loads(m["Body"])["rollout_id"] for m in messages] == expected, queue
        assert {m["Attributes"]["MessageGroupId"] for m in messages} == {group}
        for message in messages:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])


def test_the_default_stack_deploys_and_stages_under_the_buckets_own_encryption(
    aws: Any, synthesized: Synthesized
) -> None:
    from cairn.aws.s3_staging import S3StagingStore

    defaults = deploy(aws, synthesized.outdir, DEFAULTS_STACK)
    s3 = aws.client("s3")
    bucket = defaults.outputs["RolloutBucketName"]
    # What the functions get with AWS-managed encryption (CAIRN_KMS_KEY_ID is empty).
    staging = S3StagingStore(s3, bucket=bucket, kms_key_id="")

    key = staging.put(SCOPE, "ro-1", b'{"events": []}')

    assert defaults.status == "CREATE_COMPLETE"
    assert "KeyArn" not in defaults.outputs
    assert staging.get(SCOPE, "ro-1") == b'{"events": []}'
    assert s3.head_object(Bucket=bucket, Key=key)["ServerSideEncryption"] == "AES256"


def test_an_update_that_adds_alarms_keeps_the_tables_and_their_memory(
    aws: Any, synthesized: Synthesized, tmp_path: Any
) -> None:
    """docs/deploy.md, "An update": the same stack deployed again with another setting."""
    from aws_cdk import App, DefaultStackSynthesizer

    from cairn.store.dynamodb import DynamoDBBackend
    from infra.settings import StackSettings
    from infra.stack import CairnStack
    from tests.infra.moto_deploy import _adapted_to_moto, _publish_assets

    name = "CairnUpdated"
    before, after = tmp_path / "before", tmp_path / "after"
    before.mkdir()
    # The default stack's template, under this test's stack name.
    template = (synthesized.outdir / f"{DEFAULTS_STACK}.template.json").read_text()
    (before / f"{name}.template.json").write_text(template)
    assets = (synthesized.outdir / f"{DEFAULTS_STACK}.assets.json").read_text()
    (before / f"{name}.assets.json").write_text(assets.replace(DEFAULTS_STACK, name))
    app = App(outdir=str(after))
    CairnStack(
        app,
        name,
        settings=StackSettings.from_context(
            {"lambdaCode": "placeholder", "alarmEmail": "ops@example.com"}.get
        ),
        synthesizer=DefaultStackSynthesizer(generate_bootstrap_version_rule=False),
    )
    app.synth()
    first = deploy(aws, before, name)
    stores = DynamoDBBackend(
        aws.client("dynamodb"),
        items_table=first.outputs["ItemsTableName"],
        events_table=first.outputs["EventsTableName"],
        clock=FixedClock(),
    ).stores()
    (kept,) = stores.records.apply(
        SCOPE, [Create(record=new_fact("Prefers green tea", sources=(USER,)))]
    )
    updated = json.loads((after / f"{name}.template.json").read_text())
    _publish_assets(aws.client("s3"), after, name, "us-east-1")
    cloudformation = aws.client("cloudformation")

    cloudformation.update_stack(
        StackName=name,
        TemplateBody=json.dumps(_adapted_to_moto(updated, name)),
        Capabilities=["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM"],
    )

    (described,) = cloudformation.describe_stacks(StackName=name)["Stacks"]
    outputs = {o["OutputKey"]: o["OutputValue"] for o in described["Outputs"]}
    assert described["StackStatus"] == "UPDATE_COMPLETE"
    assert outputs["ItemsTableName"] == first.outputs["ItemsTableName"]
    assert outputs["EventsTableName"] == first.outputs["EventsTableName"]
    assert stores.records.get(SCOPE, kept.record_id).content == "Prefers green tea"
    # A real change (moto's CloudFormation skips alarm resources, so they are counted here).
    kinds = [r["Type"] for r in updated["Resources"].values()]
    assert kinds.count("AWS::CloudWatch::Alarm") == 17  # the Jobs function's three among them
