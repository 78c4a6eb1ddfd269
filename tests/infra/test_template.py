"""The synthesized stack holds every resource the design names, with its security settings."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cairn.rollout.staging_keys import KEY_PREFIX
from cairn.store.dynamodb.schema import TABLES, create_table_request
from tests.infra.conftest import (
    DEFAULT_STACK,
    DEFAULTS_STACK,
    VARIANT,
    VARIANT_STACK,
    Synthesized,
)

pytestmark = [pytest.mark.infra, pytest.mark.slow]

assertions = pytest.importorskip("aws_cdk.assertions")
Match = assertions.Match
Template = assertions.Template


@pytest.fixture(scope="module")
def default(synthesized: Synthesized) -> dict[str, Any]:
    return synthesized.template(DEFAULT_STACK)


@pytest.fixture(scope="module")
def defaults(synthesized: Synthesized) -> dict[str, Any]:
    return synthesized.template(DEFAULTS_STACK)


@pytest.fixture(scope="module")
def variant(synthesized: Synthesized) -> dict[str, Any]:
    return synthesized.template(VARIANT_STACK)


def resources(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {lid: r for lid, r in template["Resources"].items() if r["Type"] == kind}


def only(template: dict[str, Any], kind: str) -> str:
    (logical_id,) = resources(template, kind)
    return logical_id


def key_arn(template: dict[str, Any]) -> dict[str, Any]:
    return {"Fn::GetAtt": [only(template, "AWS::KMS::Key"), "Arn"]}


def test_one_rotating_kms_key_is_kept_when_the_stack_goes(default: dict[str, Any]) -> None:
    template = Template.from_json(default)

    template.resource_count_is("AWS::KMS::Key", 1)
    template.has_resource(
        "AWS::KMS::Key",
        {
            "Properties": {"EnableKeyRotation": True},
            "DeletionPolicy": "RetainExceptOnCreate",
            "UpdateReplacePolicy": "Retain",
        },
    )


def test_the_default_stack_encrypts_with_aws_managed_keys_and_holds_no_key_of_its_own(
    defaults: dict[str, Any],
) -> None:
    template = Template.from_json(defaults)

    template.resource_count_is("AWS::KMS::Key", 0)
    # SSEEnabled false is DynamoDB's AWS-owned key (a table is always encrypted at rest).
    template.all_resources_properties(
        "AWS::DynamoDB::Table", {"SSESpecification": {"SSEEnabled": False}}
    )
    template.has_resource_properties(
        "AWS::S3::Bucket",
        {
            "BucketEncryption": {
                "ServerSideEncryptionConfiguration": [
                    {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}
                ]
            }
        },
    )
    template.all_resources_properties(
        "AWS::SQS::Queue", {"SqsManagedSseEnabled": True, "KmsMasterKeyId": Match.absent()}
    )
    (topic,) = resources(defaults, "AWS::SNS::Topic").values()
    assert topic["Properties"]["FifoTopic"] is True
    assert json.dumps(topic["Properties"]["KmsMasterKeyId"]).endswith(':alias/aws/sns"]]}')
    # Nothing to grant on AWS-managed keys: no function role names a KMS action.
    for policy in resources(defaults, "AWS::IAM::Policy").values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            actions = statement["Action"]
            assert not [
                a
                for a in ([actions] if isinstance(actions, str) else actions)
                if a.startswith("kms:")
            ]
    assert "KeyArn" not in defaults["Outputs"]
    assert defaults["Outputs"]["EncryptionMode"]["Value"] == "aws-managed"


@pytest.mark.parametrize("stack", [DEFAULT_STACK, DEFAULTS_STACK])
def test_data_is_retained_through_delete_and_replace_but_not_left_by_a_failed_create(
    synthesized: Synthesized, stack: str
) -> None:
    template = synthesized.template(stack)

    kept = [
        r
        for r in template["Resources"].values()
        if r["Type"] in {"AWS::DynamoDB::Table", "AWS::S3::Bucket", "AWS::KMS::Key"}
    ]

    assert len(kept) >= 3
    for resource in kept:
        assert resource["DeletionPolicy"] == "RetainExceptOnCreate"
        assert resource["UpdateReplacePolicy"] == "Retain"
    for table in resources(template, "AWS::DynamoDB::Table").values():
        assert table["Properties"]["DeletionProtectionEnabled"] is True


@pytest.mark.parametrize("schema", TABLES, ids=lambda s: s.logical_name)
def test_each_table_follows_the_shared_key_schema(default: dict[str, Any], schema: Any) -> None:
    expected = create_table_request(schema, "any-name")
    (table,) = (
        r
        for lid, r in resources(default, "AWS::DynamoDB::Table").items()
        if lid.startswith("Tables" + schema.logical_name.capitalize())
    )
    properties = table["Properties"]

    assert properties["KeySchema"] == expected["KeySchema"]
    assert sorted(properties["AttributeDefinitions"], key=str) == sorted(
        expected["AttributeDefinitions"], key=str
    )
    assert properties.get("GlobalSecondaryIndexes", []) == expected.get(
        "GlobalSecondaryIndexes", []
    )
    assert properties.get("LocalSecondaryIndexes", []) == expected.get("LocalSecondaryIndexes", [])
    assert properties["TimeToLiveSpecification"] == {
        "AttributeName": schema.ttl_attribute,
        "Enabled": True,
    }


def test_tables_are_on_demand_point_in_time_recoverable_kms_encrypted_and_kept(
    default: dict[str, Any],
) -> None:
    template = Template.from_json(default)

    template.resource_count_is("AWS::DynamoDB::Table", len(TABLES))
    template.all_resources(
        "AWS::DynamoDB::Table",
        {
            "Properties": {
                "BillingMode": "PAY_PER_REQUEST",
                "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
                "SSESpecification": {
                    "SSEEnabled": True,
                    "SSEType": "KMS",
                    "KMSMasterKeyId": key_arn(default),
                },
                "DeletionProtectionEnabled": True,
            },
            "DeletionPolicy": "RetainExceptOnCreate",
        },
    )


def test_the_rollout_bucket_is_private_kms_encrypted_and_unversioned(
    default: dict[str, Any],
) -> None:
    template = Template.from_json(default)

    template.resource_count_is("AWS::S3::Bucket", 1)
    template.has_resource(
        "AWS::S3::Bucket",
        {
            "Properties": {
                "BucketEncryption": {
                    "ServerSideEncryptionConfiguration": [
                        {
                            "BucketKeyEnabled": True,
                            "ServerSideEncryptionByDefault": {
                                "SSEAlgorithm": "aws:kms",
                                "KMSMasterKeyID": key_arn(default),
                            },
                        }
                    ]
                },
                "PublicAccessBlockConfiguration": {
                    "BlockPublicAcls": True,
                    "BlockPublicPolicy": True,
                    "IgnorePublicAcls": True,
                    "RestrictPublicBuckets": True,
                },
                "OwnershipControls": {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]},
                # Versioning would turn erase into a delete marker over intact content.
                "VersioningConfiguration": Match.absent(),
            },
            "DeletionPolicy": "RetainExceptOnCreate",
        },
    )


def test_the_rollout_bucket_refuses_plain_http_and_old_tls(default: dict[str, Any]) -> None:
    (policy,) = resources(default, "AWS::S3::BucketPolicy").values()
    statements = policy["Properties"]["PolicyDocument"]["Statement"]

    denied = [s["Condition"] for s in statements if s["Effect"] == "Deny"]

    assert {"Bool": {"aws:SecureTransport": "false"}} in denied
    assert {"NumericLessThan": {"s3:TlsVersion": 1.2}} in denied


def test_unconsumed_rollouts_expire_after_the_retention_days(
    default: dict[str, Any], variant: dict[str, Any]
) -> None:
    for template, days in ((default, 30), (variant, VARIANT["retention_days"])):
        Template.from_json(template).has_resource_properties(
            "AWS::S3::Bucket",
            {
                "LifecycleConfiguration": {
                    "Rules": [
                        {
                            "Prefix": KEY_PREFIX,
                            "ExpirationInDays": days,
                            "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 1},
                            "Status": "Enabled",
                        },
                        # Recall index objects: derived, rebuilt by the next recall; a day
                        # bounds how long one a crashed rebuild left behind can stay.
                        {"Prefix": "recall-index/", "ExpirationInDays": 1, "Status": "Enabled"},
                    ]
                }
            },
        )


def test_the_rollout_topic_is_fifo_encrypted_and_tls_only(default: dict[str, Any]) -> None:
    template = Template.from_json(default)

    template.resource_count_is("AWS::SNS::Topic", 1)
    template.has_resource_properties(
        "AWS::SNS::Topic",
        {
            "FifoTopic": True,
            "ContentBasedDeduplication": False,
            "KmsMasterKeyId": key_arn(default),
        },
    )
    template.has_resource_properties(
        "AWS::SNS::TopicPolicy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {
                                "Effect": "Deny",
                                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                            }
                        )
                    ]
                )
            }
        },
    )


def fifo_queues(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The fan-out's queues: the workers and their dead-letter queues (the sweep's failure
    queue is a standard queue, tests/infra/test_extraction.py)."""
    return {
        lid: r
        for lid, r in resources(template, "AWS::SQS::Queue").items()
        if r["Properties"].get("FifoQueue")
    }


def worker_queues(template: dict[str, Any]) -> dict[str, str]:
    """Each worker queue's logical id -> the logical id of its dead-letter queue."""
    return {
        lid: r["Properties"]["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0]
        for lid, r in resources(template, "AWS::SQS::Queue").items()
        if "RedrivePolicy" in r["Properties"]
    }


def test_extraction_and_consolidation_queues_each_have_a_dead_letter_queue(
    default: dict[str, Any],
) -> None:
    queues = fifo_queues(default)
    workers = worker_queues(default)

    assert sorted(lid.removeprefix("Fanout")[:5] for lid in workers) == ["Conso", "Extra"]
    assert len(queues) == 4
    assert set(workers.values()) | set(workers) == set(queues)
    for worker in workers:
        redrive = queues[worker]["Properties"]["RedrivePolicy"]
        assert 1 < redrive["maxReceiveCount"] <= 10
    for dead_letters in workers.values():
        assert queues[dead_letters]["Properties"]["MessageRetentionPeriod"] == 14 * 24 * 3600


def test_every_fanout_queue_is_fifo_kms_encrypted_and_every_queue_tls_only(
    default: dict[str, Any],
) -> None:
    assert len(fifo_queues(default)) == 4
    for queue in fifo_queues(default).values():
        assert queue["Properties"]["KmsMasterKeyId"] == key_arn(default)
    template = Template.from_json(default)
    # The two failure queues (the sweep's, the background jobs'), events only: SSE-SQS.
    template.resource_properties_count_is("AWS::SQS::Queue", {"FifoQueue": Match.absent()}, 2)
    protected = {
        queue["Ref"]
        for policy in resources(default, "AWS::SQS::QueuePolicy").values()
        for queue in policy["Properties"]["Queues"]
        if {"Bool": {"aws:SecureTransport": "false"}}
        in [s.get("Condition") for s in policy["Properties"]["PolicyDocument"]["Statement"]]
    }
    assert protected == set(resources(default, "AWS::SQS::Queue"))


def test_the_topic_fans_out_raw_to_both_worker_queues_and_nothing_else(
    default: dict[str, Any],
) -> None:
    subscriptions = resources(default, "AWS::SNS::Subscription").values()
    topic = only(default, "AWS::SNS::Topic")

    endpoints = {s["Properties"]["Endpoint"]["Fn::GetAtt"][0] for s in subscriptions}

    assert endpoints == set(worker_queues(default))
    for subscription in subscriptions:
        assert subscription["Properties"]["Protocol"] == "sqs"
        assert subscription["Properties"]["RawMessageDelivery"] is True
        assert subscription["Properties"]["TopicArn"] == {"Ref": topic}


def test_sns_may_use_the_key_to_deliver_into_the_encrypted_queues(
    default: dict[str, Any],
) -> None:
    key = next(iter(resources(default, "AWS::KMS::Key").values()))
    statements = key["Properties"]["KeyPolicy"]["Statement"]

    sns_statements = [
        s for s in statements if s.get("Principal") == {"Service": "sns.amazonaws.com"}
    ]

    assert len(sns_statements) == 1
    assert set(sns_statements[0]["Action"]) == {"kms:Decrypt", "kms:GenerateDataKey"}
    # SNS may use the key on behalf of this account only.
    assert sns_statements[0]["Condition"] == {
        "StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}
    }


@pytest.mark.parametrize("stack", [DEFAULT_STACK, VARIANT_STACK])
def test_every_service_statement_of_the_key_policy_is_bound_to_this_account(
    synthesized: Synthesized, stack: str
) -> None:
    (key,) = resources(synthesized.template(stack), "AWS::KMS::Key").values()

    services = [
        s for s in key["Properties"]["KeyPolicy"]["Statement"] if "Service" in s["Principal"]
    ]

    assert services
    for statement in services:
        conditions = {name for operator in statement["Condition"].values() for name in operator}
        assert conditions & {"aws:SourceAccount", "aws:SourceArn"}, statement


def test_without_an_alarm_address_no_alarm_is_created(
    default: dict[str, Any], defaults: dict[str, Any]
) -> None:
    for template in (default, defaults):
        assert resources(template, "AWS::CloudWatch::Alarm") == {}
        assert resources(template, "AWS::SNS::Subscription").keys() == {
            lid
            for lid, r in resources(template, "AWS::SNS::Subscription").items()
            if r["Properties"]["Protocol"] == "sqs"
        }


def test_an_alarm_watches_each_dead_letter_queue(variant: dict[str, Any]) -> None:
    dead_letters = set(worker_queues(variant).values())

    watched = set()
    for alarm in resources(variant, "AWS::CloudWatch::Alarm").values():
        properties = alarm["Properties"]
        if properties.get("MetricName") != "ApproximateNumberOfMessagesVisible":
            continue
        (dimension,) = properties["Dimensions"]
        queue = dimension["Value"]["Fn::GetAtt"][0]
        if queue in dead_letters:
            assert properties["Threshold"] == 1
            assert properties["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
            watched.add(queue)

    assert watched == dead_letters


def test_an_alarm_email_gets_an_encrypted_topic_that_every_alarm_notifies(
    variant: dict[str, Any],
) -> None:
    template = Template.from_json(variant)
    alarm_topic = next(
        lid
        for lid, r in resources(variant, "AWS::SNS::Topic").items()
        if not r["Properties"].get("FifoTopic")
    )

    template.has_resource_properties(
        "AWS::SNS::Subscription",
        {"Protocol": "email", "Endpoint": VARIANT["alarm_email"], "TopicArn": {"Ref": alarm_topic}},
    )
    template.has_resource_properties(
        "AWS::SNS::Topic", {"KmsMasterKeyId": key_arn(variant), "FifoTopic": Match.absent()}
    )
    template.all_resources_properties(
        "AWS::CloudWatch::Alarm", {"AlarmActions": [{"Ref": alarm_topic}]}
    )
    template.has_resource_properties(
        "AWS::KMS::Key",
        {
            "KeyPolicy": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {
                                "Principal": {"Service": "cloudwatch.amazonaws.com"},
                                "Action": ["kms:Decrypt", "kms:GenerateDataKey*"],
                            }
                        )
                    ]
                )
            }
        },
    )


def test_every_function_has_a_role_of_its_own(default: dict[str, Any]) -> None:
    resources = default["Resources"]
    functions = [r for r in resources.values() if r["Type"] == "AWS::Lambda::Function"]
    roles = [r["Properties"]["Role"]["Fn::GetAtt"][0] for r in functions]

    assert len(functions) >= 2  # extraction and sweep at least (tests/infra/test_extraction.py)
    assert len(set(roles)) == len(roles)
    assert all(resources[role]["Type"] == "AWS::IAM::Role" for role in roles)


def test_outputs_name_the_resources_and_the_chosen_models(
    default: dict[str, Any], variant: dict[str, Any]
) -> None:
    outputs = {k: v["Value"] for k, v in default["Outputs"].items()}
    chosen = {k: v["Value"] for k, v in variant["Outputs"].items()}

    assert {
        "ItemsTableName",
        "EventsTableName",
        "RolloutBucketName",
        "KeyArn",
        "RolloutTopicArn",
        "ExtractionQueueUrl",
        "ConsolidationQueueUrl",
    } <= set(outputs)
    assert outputs["Embedder"] == "bedrock"
    assert outputs["EmbeddingModelId"] == "amazon.titan-embed-text-v2:0"
    assert outputs["ExtractionModelId"] == "amazon.nova-lite-v1:0"
    assert chosen["Embedder"] == "onnx"
    assert chosen["EmbeddingModelId"] == "all-MiniLM-L6-v2-onnx-int8"
    assert chosen["ExtractionModelId"] == VARIANT["extraction_model_id"]
