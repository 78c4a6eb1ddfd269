"""The key design holds: sort keys order as the contract orders, range bounds are exact, the
namespace filter is ``namespace_matches``, and the schema module builds the tables we query."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from moto import mock_aws

from cairn.changes import Create, NewRecord
from cairn.models import Scope, Source, SourceKind, namespace_matches
from cairn.store.dynamodb import DynamoDBBackend
from cairn.store.dynamodb.codec import head_sk, heads_after, version_sk, versions_after
from cairn.store.dynamodb.schema import (
    EVENTS,
    ITEMS,
    LIVE_INDEX,
    TABLES,
    create_table_request,
)

# Record ids as the contract allows them (``mem-`` + 36..46 of [a-zA-Z0-9_-]), short ones
# biased towards being prefixes of one another, where a key format goes wrong first.
RECORD_ID = st.builds(
    lambda body, tail: "mem-" + body + tail,
    st.text(alphabet="a0_-Z", min_size=36, max_size=36),
    st.text(alphabet="a0_-Z", max_size=3),
)
VERSION = st.integers(min_value=1, max_value=10**9)


@settings(max_examples=300)
@given(st.lists(st.tuples(RECORD_ID, VERSION), min_size=2, max_size=8, unique=True))
def test_version_keys_sort_by_record_id_then_version(refs: list[tuple[str, int]]) -> None:
    assert sorted(refs, key=lambda r: version_sk(*r)) == sorted(refs)


@settings(max_examples=300)
@given(RECORD_ID, RECORD_ID, VERSION, VERSION)
def test_range_bounds_fall_between_one_record_and_the_next(
    first: str, second: str, v1: int, v2: int
) -> None:
    low, high = sorted((first, second))
    if low == high:
        return
    assert version_sk(low, v1) < versions_after(low) <= version_sk(high, v2)
    assert head_sk(low) < heads_after(low) <= head_sk(high)


@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    with mock_aws():
        made = boto3.client("dynamodb", region_name="us-east-1")
        for table in TABLES:
            made.create_table(**create_table_request(table, f"cairn-{table.logical_name}"))
        yield made


def test_the_tables_have_the_keys_and_indexes_the_schema_names(client: Any) -> None:
    items = client.describe_table(TableName="cairn-items")["Table"]
    events = client.describe_table(TableName="cairn-events")["Table"]

    assert [k["AttributeName"] for k in items["KeySchema"]] == [
        ITEMS.partition_key.name,
        ITEMS.sort_key.name,
    ]
    indexes = {index["IndexName"]: index for index in items["GlobalSecondaryIndexes"]}
    live = indexes[LIVE_INDEX.name]
    # Listing reads the version JSON and filters on the namespace: both must be projected.
    assert set(live["Projection"]["NonKeyAttributes"]) == {"d", "ns"}
    (by_id,) = events["LocalSecondaryIndexes"]
    assert by_id["IndexName"] == EVENTS.local_indexes[0].name
    assert items["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"


SEGMENT = st.text(alphabet="a0-_1", min_size=1, max_size=4).filter(lambda s: s[0] not in "-_")
NAMESPACE = st.builds(
    lambda lead, segments, trailing: lead + "/".join(segments) + ("/" if trailing else ""),
    st.sampled_from(["/", ""]),
    st.lists(SEGMENT, min_size=1, max_size=4),
    st.booleans(),
)


def test_namespace_prefix_listing_matches_the_segment_rule(client: Any) -> None:
    records = (
        DynamoDBBackend(client, items_table="cairn-items", events_table="cairn-events")
        .stores()
        .records
    )
    actors = itertools.count()

    @settings(max_examples=60, deadline=None)
    @given(
        namespaces=st.lists(NAMESPACE, min_size=1, max_size=10),
        prefix=st.one_of(NAMESPACE, st.sampled_from(["/", "/a", "/a/", "a", "a0"])),
        include_inactive=st.booleans(),
    )
    def check(namespaces: list[str], prefix: str, include_inactive: bool) -> None:
        scope = Scope(memory_id="m1", actor_id=f"actor-{next(actors)}")
        created = [
            NewRecord(namespace=ns, content="fact", sources=(Source(kind=SourceKind.USER),))
            for ns in namespaces
        ]
        records.apply(scope, [Create(record=r) for r in created])

        page = records.list_records(
            scope, namespace_prefix=prefix, include_inactive=include_inactive, limit=100
        )

        expected = sorted(r.record_id for r in created if namespace_matches(r.namespace, prefix))
        assert [v.record_id for v in page.items] == expected

    check()
