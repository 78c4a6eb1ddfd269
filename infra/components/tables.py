"""The items and events tables, built from ``cairn.store.dynamodb.schema`` (the single source).

``ddb.Table`` rather than ``TableV2``: TableV2 synthesizes ``AWS::DynamoDB::GlobalTable``,
which moto cannot deploy, and a single-region table is all cairn needs.
"""

from __future__ import annotations

from aws_cdk import aws_dynamodb as ddb
from aws_cdk import aws_kms as kms
from constructs import Construct

from cairn.store.dynamodb.schema import TABLES, KeyAttribute, TableSchema
from infra.components.encryption import RETAINED

_ATTRIBUTE_TYPES = {
    "S": ddb.AttributeType.STRING,
    "N": ddb.AttributeType.NUMBER,
    "B": ddb.AttributeType.BINARY,
}
_PROJECTIONS = {
    "ALL": ddb.ProjectionType.ALL,
    "KEYS_ONLY": ddb.ProjectionType.KEYS_ONLY,
    "INCLUDE": ddb.ProjectionType.INCLUDE,
}


class MemoryTables(Construct):
    """One on-demand, PITR-protected, deletion-protected table per schema in ``TABLES``,
    encrypted with ``key`` (or DynamoDB's AWS-owned key when ``key`` is ``None``).

    Kept through a stack deletion and a replacement, never orphaned by a failed first create
    (``infra.components.encryption.RETAINED``); deletion protection makes even a deliberate
    ``delete-table`` a two-step act. A replacement is the one change that would start an empty
    table beside the kept one: every property that forces it (name, keys, local indexes) comes
    from the schema, and docs/deploy.md has ``cdk diff`` checked for it before an update.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        key: kms.IKey | None,
        items_stream: bool = False,
    ) -> None:
        super().__init__(scope, construct_id)
        # With record streaming, the items table keeps a stream of keys only (no content
        # enters it): the change items' keys wake the delivery function.
        streams = {"items": ddb.StreamViewType.KEYS_ONLY} if items_stream else {}
        self.by_schema: dict[str, ddb.Table] = {
            schema.logical_name: _table(self, schema, key, streams.get(schema.logical_name))
            for schema in TABLES
        }
        self.items = self.by_schema["items"]
        self.events = self.by_schema["events"]


def _attribute(attribute: KeyAttribute) -> ddb.Attribute:
    return ddb.Attribute(name=attribute.name, type=_ATTRIBUTE_TYPES[attribute.type])


def _table(
    scope: Construct,
    schema: TableSchema,
    key: kms.IKey | None,
    stream: ddb.StreamViewType | None,
) -> ddb.Table:
    table = ddb.Table(
        scope,
        schema.logical_name.capitalize(),
        partition_key=_attribute(schema.partition_key),
        sort_key=_attribute(schema.sort_key),
        billing_mode=ddb.BillingMode.PAY_PER_REQUEST,
        encryption=(ddb.TableEncryption.CUSTOMER_MANAGED if key else ddb.TableEncryption.DEFAULT),
        encryption_key=key,
        point_in_time_recovery_specification=ddb.PointInTimeRecoverySpecification(
            point_in_time_recovery_enabled=True
        ),
        time_to_live_attribute=schema.ttl_attribute,
        # Memory is the product: deleting the stack must never delete it (docs/deploy.md).
        removal_policy=RETAINED,
        deletion_protection=True,
        stream=stream,
    )
    for index in schema.global_indexes:
        table.add_global_secondary_index(
            index_name=index.name,
            partition_key=_attribute(index.partition_key),
            sort_key=_attribute(index.sort_key),
            projection_type=_PROJECTIONS[index.projection],
            non_key_attributes=list(index.non_key_attributes) or None,
        )
    for index in schema.local_indexes:
        if index.partition_key != schema.partition_key:
            raise ValueError(
                f"local index {index.name!r} of {schema.logical_name!r} must share the table's "
                "partition key; fix cairn/store/dynamodb/schema.py"
            )
        table.add_local_secondary_index(
            index_name=index.name,
            sort_key=_attribute(index.sort_key),
            projection_type=_PROJECTIONS[index.projection],
            non_key_attributes=list(index.non_key_attributes) or None,
        )
    return table
