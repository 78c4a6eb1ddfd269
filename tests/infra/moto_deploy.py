"""Deploy a synthesized CDK template into moto's CloudFormation, and redo what moto skips.

moto 5.2 creates tables, keys, buckets, topics and queues from a template but silently skips
``AWS::SNS::Subscription`` (and queue/bucket/topic policies), so the fan-out is re-created here
from what the template declares (shared/reference/moto-cdk.md §3). File assets are uploaded to
the bootstrap bucket first, and outputs that point at skipped resources are dropped, since
either would make ``CreateStack`` fail.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ACCOUNT = "123456789012"


@dataclass(frozen=True)
class Deployed:
    """A stack created in moto: its status, outputs and physical ids by logical id."""

    status: str
    outputs: dict[str, str]
    physical: dict[str, str]


def deploy(session: Any, outdir: Path, stack: str) -> Deployed:
    """Create ``stack`` from ``outdir`` in the active moto mock and subscribe its fan-out."""
    template = _adapted_to_moto(json.loads((outdir / f"{stack}.template.json").read_text()), stack)
    _publish_assets(session.client("s3"), outdir, stack, session.region_name)
    cloudformation = session.client("cloudformation")
    cloudformation.create_stack(
        StackName=stack,
        TemplateBody=json.dumps(template),
        Capabilities=["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM"],
    )
    (described,) = cloudformation.describe_stacks(StackName=stack)["Stacks"]
    summaries = cloudformation.list_stack_resources(StackName=stack)["StackResourceSummaries"]
    physical = {s["LogicalResourceId"]: s.get("PhysicalResourceId", "") for s in summaries}
    _subscribe(session, template, physical)
    return Deployed(
        status=described["StackStatus"],
        outputs={o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", [])},
        physical=physical,
    )


def _adapted_to_moto(template: dict[str, Any], stack: str) -> dict[str, Any]:
    """The template with moto 5.2.5's gaps worked around; what it means in AWS is unchanged."""
    from moto.cloudformation.parsing import get_model_map

    skipped = {lid for lid, r in template["Resources"].items() if r["Type"] not in get_model_map()}
    for logical_id, resource in template["Resources"].items():
        properties = resource.get("Properties", {})
        if resource["Type"] == "AWS::KMS::Key":
            # moto reads a CloudFormation key's Tags as KMS TagKey/TagValue pairs and fails
            # with KeyError('TagKey'); tags matter to nothing tested here.
            properties.pop("Tags", None)
        if resource["Type"] == "AWS::SQS::Queue" and properties.get("FifoQueue"):
            # CloudFormation names an unnamed FIFO queue "<generated>.fifo"; moto generates
            # a name without the suffix and then refuses it.
            properties.setdefault("QueueName", f"{stack}-{logical_id}"[-75:] + ".fifo")
    # An output pointing at a resource moto skipped makes CreateStack crash.
    template["Outputs"] = {
        name: output
        for name, output in template.get("Outputs", {}).items()
        if not _references(output) & skipped
    }
    return template


def _references(node: Any) -> set[str]:
    if isinstance(node, dict):
        found: set[str] = set()
        for key, value in node.items():
            if key == "Ref" and isinstance(value, str):
                found.add(value)
            elif key == "Fn::GetAtt":
                found.add(value[0] if isinstance(value, list) else value.split(".")[0])
            else:
                found |= _references(value)
        return found
    if isinstance(node, list):
        return set().union(*(_references(item) for item in node))
    return set()


def _publish_assets(s3: Any, outdir: Path, stack: str, region: str) -> None:
    manifest = outdir / f"{stack}.assets.json"
    if not manifest.exists():
        return
    for asset in json.loads(manifest.read_text()).get("files", {}).values():
        source = outdir / asset["source"]["path"]
        zipped = asset["source"].get("packaging") == "zip"
        body = _zip(source) if zipped else source.read_bytes()
        for destination in asset["destinations"].values():
            bucket = (
                destination["bucketName"]
                .replace("${AWS::AccountId}", ACCOUNT)
                .replace("${AWS::Region}", region)
                .replace("${AWS::Partition}", "aws")
            )
            if bucket not in {b["Name"] for b in s3.list_buckets()["Buckets"]}:
                s3.create_bucket(Bucket=bucket)
            s3.put_object(Bucket=bucket, Key=destination["objectKey"], Body=body)


def _zip(directory: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(directory.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(directory).as_posix())
    return buffer.getvalue()


def _subscribe(session: Any, template: dict[str, Any], physical: dict[str, str]) -> None:
    sqs, sns = session.client("sqs"), session.client("sns")

    def arn_of(reference: dict[str, Any]) -> str:
        if "Ref" in reference:  # a topic's Ref is its ARN
            return physical[reference["Ref"]]
        (logical_id, attribute) = reference["Fn::GetAtt"]
        assert attribute == "Arn", f"cannot resolve {reference} in moto"
        attributes = sqs.get_queue_attributes(
            QueueUrl=physical[logical_id], AttributeNames=["QueueArn"]
        )
        return str(attributes["Attributes"]["QueueArn"])

    for resource in template["Resources"].values():
        if resource["Type"] != "AWS::SNS::Subscription":
            continue
        properties = resource["Properties"]
        attributes = {
            name: _attribute(properties[name])
            for name in ("RawMessageDelivery", "FilterPolicy", "FilterPolicyScope")
            if name in properties
        }
        endpoint = properties["Endpoint"]
        sns.subscribe(
            TopicArn=arn_of(properties["TopicArn"]),
            Protocol=properties["Protocol"],
            Endpoint=endpoint if isinstance(endpoint, str) else arn_of(endpoint),
            Attributes=attributes,
        )


def _attribute(value: Any) -> str:
    """A subscription property as the string ``SetSubscriptionAttributes`` expects."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict):
        return json.dumps(value)
    return str(value)
