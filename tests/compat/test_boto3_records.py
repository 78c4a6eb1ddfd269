"""The bedrock-agentcore client's long-term record operations, unmodified, against cairn serve."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

T0 = 1_767_258_000
FACTS = [
    ("tea", "/facts/user/a1/", "The user drinks green tea every morning"),
    ("dog", "/facts/user/a1/", "The user has a dog named Biscuit"),
    ("job", "/facts/user/a10/", "The user works as a nurse on night shifts"),
    ("misc", "/notes/", "Deploys happen on Tuesdays"),
]


def batch_create(client: Any, memory_id: str, **extra: Any) -> dict[str, str]:
    records = [
        {
            "requestIdentifier": request_id,
            "namespaces": [namespace],
            "content": {"text": text},
            "timestamp": T0,
            "metadata": {"topic": {"stringValue": request_id}},
        }
        for request_id, namespace, text in FACTS
    ]
    answer = client.batch_create_memory_records(memoryId=memory_id, records=records, **extra)
    assert answer["failedRecords"] == []
    return {row["requestIdentifier"]: row["memoryRecordId"] for row in answer["successfulRecords"]}


def retrieve(client: Any, memory_id: str, query: str, **where: Any) -> list[dict[str, Any]]:
    criteria = {"searchQuery": query, "topK": where.pop("topK", 5), **where.pop("criteria", {})}
    answer = client.retrieve_memory_records(memoryId=memory_id, searchCriteria=criteria, **where)
    found: list[dict[str, Any]] = answer["memoryRecordSummaries"]
    return found


def test_created_records_read_back_exactly(data_plane: Any, memory: dict[str, Any]) -> None:
    ids = batch_create(data_plane, memory["id"])

    record = data_plane.get_memory_record(memoryId=memory["id"], memoryRecordId=ids["tea"])[
        "memoryRecord"
    ]

    assert record["memoryRecordId"] == ids["tea"]
    assert record["content"] == {"text": FACTS[0][2]}
    assert record["namespaces"] == ["/facts/user/a1/"]
    assert record["timestamp"] == datetime.fromtimestamp(T0, UTC)
    assert record["metadata"] == {"topic": {"stringValue": "tea"}}
    assert isinstance(record["createdAt"], datetime)
    assert 40 <= len(ids["tea"]) <= 50
    assert ids["tea"].startswith("mem-")


def test_retrieve_ranks_by_relevance_under_a_namespace_prefix(
    data_plane: Any, memory: dict[str, Any]
) -> None:
    ids = batch_create(data_plane, memory["id"])

    found = retrieve(data_plane, memory["id"], "what does the user drink?", namespace="/facts/")

    assert found[0]["memoryRecordId"] == ids["tea"]
    assert {r["memoryRecordId"] for r in found} <= {ids["tea"], ids["dog"], ids["job"]}
    assert all(0.0 <= r["score"] <= 1.0 for r in found)
    assert [r["score"] for r in found] == sorted((r["score"] for r in found), reverse=True)


def test_namespace_prefixes_respect_segment_boundaries(
    data_plane: Any, memory: dict[str, Any]
) -> None:
    ids = batch_create(data_plane, memory["id"])

    under_a1 = retrieve(data_plane, memory["id"], "user", namespacePath="/facts/user/a1/")
    listed = data_plane.list_memory_records(memoryId=memory["id"], namespace="/facts/user/a1")

    assert {r["memoryRecordId"] for r in under_a1} <= {ids["tea"], ids["dog"]}
    assert {r["memoryRecordId"] for r in listed["memoryRecordSummaries"]} == {
        ids["tea"],
        ids["dog"],
    }


def test_top_k_bounds_the_answer(data_plane: Any, memory: dict[str, Any]) -> None:
    batch_create(data_plane, memory["id"])

    assert len(retrieve(data_plane, memory["id"], "the user", namespace="/", topK=1)) == 1


def test_metadata_filters_and_strategy_ids_narrow_a_retrieve(
    data_plane: Any, memory: dict[str, Any]
) -> None:
    ids = batch_create(data_plane, memory["id"])
    only_dog = [
        {
            "left": {"metadataKey": "topic"},
            "operator": "EQUALS_TO",
            "right": {"metadataValue": {"stringValue": "dog"}},
        }
    ]

    found = retrieve(
        data_plane, memory["id"], "the user", namespace="/", criteria={"metadataFilters": only_dog}
    )
    none = retrieve(
        data_plane, memory["id"], "the user", namespace="/", criteria={"memoryStrategyId": "other"}
    )

    assert [r["memoryRecordId"] for r in found] == [ids["dog"]]
    assert none == []


def test_a_read_without_namespace_or_namespace_path_reads_the_whole_memory(
    data_plane: Any, memory: dict[str, Any]
) -> None:
    ids = batch_create(data_plane, memory["id"])

    found = retrieve(data_plane, memory["id"], "when do deploys happen?")
    listed = data_plane.list_memory_records(memoryId=memory["id"])["memoryRecordSummaries"]

    assert found[0]["memoryRecordId"] == ids["misc"]  # filed under /notes/, the shared scope
    assert sorted(r["memoryRecordId"] for r in listed) == sorted(ids.values())


def test_records_are_listed_across_pages(data_plane: Any, memory: dict[str, Any]) -> None:
    ids = batch_create(data_plane, memory["id"])

    pages = data_plane.get_paginator("list_memory_records").paginate(
        memoryId=memory["id"], namespace="/", PaginationConfig={"PageSize": 3}
    )
    listed = [r["memoryRecordId"] for page in pages for r in page["memoryRecordSummaries"]]

    assert sorted(listed) == sorted(ids.values())
    assert len(listed) == len(set(listed))


def test_an_update_is_a_new_version_seen_everywhere(
    data_plane: Any, memory: dict[str, Any]
) -> None:
    ids = batch_create(data_plane, memory["id"])

    answer = data_plane.batch_update_memory_records(
        memoryId=memory["id"],
        records=[
            {
                "memoryRecordId": ids["tea"],
                "timestamp": T0 + 60,
                "content": {"text": "The user switched to black coffee"},
                "metadata": {"score": {"numberValue": 4.5}},
            },
            {"memoryRecordId": "mem-" + "0" * 36, "timestamp": T0},
        ],
    )

    assert [r["memoryRecordId"] for r in answer["successfulRecords"]] == [ids["tea"]]
    assert [(r["status"], r["errorCode"]) for r in answer["failedRecords"]] == [("FAILED", 404)]
    record = data_plane.get_memory_record(memoryId=memory["id"], memoryRecordId=ids["tea"])[
        "memoryRecord"
    ]
    assert record["content"]["text"] == "The user switched to black coffee"
    assert record["metadata"] == {"score": {"numberValue": 4.5}}
    found = retrieve(data_plane, memory["id"], "coffee", namespace="/facts/user/a1/", topK=1)
    assert found[0]["memoryRecordId"] == ids["tea"]


def test_deleted_records_are_gone_from_every_read(data_plane: Any, memory: dict[str, Any]) -> None:
    ids = batch_create(data_plane, memory["id"])

    deleted = data_plane.batch_delete_memory_records(
        memoryId=memory["id"],
        records=[{"memoryRecordId": ids["tea"]}, {"memoryRecordId": ids["tea"]}],
    )
    single = data_plane.delete_memory_record(memoryId=memory["id"], memoryRecordId=ids["dog"])

    assert [r["memoryRecordId"] for r in deleted["successfulRecords"]] == [ids["tea"]]
    assert deleted["failedRecords"][0]["errorCode"] == 400  # named twice in one batch
    assert single["memoryRecordId"] == ids["dog"]
    for record_id in (ids["tea"], ids["dog"]):
        with pytest.raises(data_plane.exceptions.ResourceNotFoundException):
            data_plane.get_memory_record(memoryId=memory["id"], memoryRecordId=record_id)
    remaining = data_plane.list_memory_records(memoryId=memory["id"], namespace="/")
    assert {r["memoryRecordId"] for r in remaining["memoryRecordSummaries"]} == {
        ids["job"],
        ids["misc"],
    }
    assert {
        r["memoryRecordId"] for r in retrieve(data_plane, memory["id"], "tea dog", namespace="/")
    } <= {
        ids["job"],
        ids["misc"],
    }


def test_a_retried_batch_create_writes_once(data_plane: Any, memory: dict[str, Any]) -> None:
    first = batch_create(data_plane, memory["id"], clientToken="batch-1")
    again = batch_create(data_plane, memory["id"], clientToken="batch-1")

    assert again == first
    listed = data_plane.list_memory_records(memoryId=memory["id"], namespace="/")
    assert len(listed["memoryRecordSummaries"]) == len(FACTS)


def test_requests_botocore_lets_through_are_refused_by_the_server(
    data_plane: Any, memory: dict[str, Any]
) -> None:
    refused = data_plane.exceptions.ValidationException
    with pytest.raises(refused, match="topK"):
        retrieve(data_plane, memory["id"], "q", namespace="/", topK=1000)
    with pytest.raises(refused, match="not both"):
        retrieve(data_plane, memory["id"], "q", namespace="/", namespacePath="/")
    with pytest.raises(refused, match="wildcards"):
        retrieve(data_plane, memory["id"], "q", namespace="/facts/*/")
    with pytest.raises(refused, match="memoryId"):
        data_plane.list_memory_records(memoryId="not a memory id!", namespace="/")
    with pytest.raises(refused, match=r"recordExpirySpecification\.action"):
        data_plane.batch_create_memory_records(
            memoryId=memory["id"], records=[], recordExpirySpecification={"action": "REMOVE"}
        )


def test_a_record_given_an_expiry_says_when_it_expires(
    data_plane: Any, memory: dict[str, Any]
) -> None:
    before = datetime.now(UTC)
    answer = data_plane.batch_create_memory_records(
        memoryId=memory["id"],
        records=[
            {
                "requestIdentifier": "r0",
                "namespaces": ["/facts/user/a1/"],
                "content": {"text": "The user is in Lisbon this week"},
                "timestamp": T0,
            }
        ],
        recordExpirySpecification={"recordExpiryDurationDays": 31},
    )
    (row,) = answer["successfulRecords"]

    record = data_plane.get_memory_record(
        memoryId=memory["id"], memoryRecordId=row["memoryRecordId"]
    )

    expires = record["memoryRecord"]["expiresAt"]
    assert before + timedelta(days=31) - timedelta(seconds=1) <= expires
    assert expires <= datetime.now(UTC) + timedelta(days=31)
    assert (
        "expiresAt"
        not in data_plane.list_memory_records(memoryId=memory["id"])["memoryRecordSummaries"][0]
    )


def test_extraction_jobs_report_honestly_that_none_ran(
    data_plane: Any, memory: dict[str, Any]
) -> None:
    assert data_plane.list_memory_extraction_jobs(memoryId=memory["id"])["jobs"] == []
    with pytest.raises(data_plane.exceptions.ResourceNotFoundException, match="extraction"):
        data_plane.start_memory_extraction_job(
            memoryId=memory["id"], extractionJob={"jobId": "job-1"}
        )


def test_typed_metadata_and_date_filters_narrow_list_and_retrieve(
    data_plane: Any, memory: dict[str, Any]
) -> None:
    def record(request_id: str, text: str, day: int, stars: float) -> dict[str, Any]:
        return {
            "requestIdentifier": request_id,
            "namespaces": ["/facts/user/a1/"],
            "content": {"text": text},
            "timestamp": T0,
            "metadata": {
                "seen": {"dateTimeValue": datetime(2026, 3, day, tzinfo=UTC)},
                "stars": {"numberValue": stars},
            },
        }

    answer = data_plane.batch_create_memory_records(
        memoryId=memory["id"],
        records=[
            record("old", "The user visited Lisbon in spring", 1, 5),
            record("new", "The user visited Porto in spring", 20, 3),
        ],
    )
    ids = {r["requestIdentifier"]: r["memoryRecordId"] for r in answer["successfulRecords"]}
    after_the_10th = {
        "left": {"metadataKey": "seen"},
        "operator": "AFTER",
        "right": {"metadataValue": {"dateTimeValue": datetime(2026, 3, 10, tzinfo=UTC)}},
    }
    four_stars = {
        "left": {"metadataKey": "stars"},
        "operator": "GREATER_THAN_OR_EQUALS",
        "right": {"metadataValue": {"numberValue": 4}},
    }

    listed = data_plane.list_memory_records(memoryId=memory["id"], metadataFilters=[after_the_10th])
    found = retrieve(
        data_plane,
        memory["id"],
        "the city the user visited",
        criteria={"metadataFilters": [four_stars]},
    )
    both = data_plane.list_memory_records(
        memoryId=memory["id"], metadataFilters=[after_the_10th, four_stars]
    )

    assert [r["memoryRecordId"] for r in listed["memoryRecordSummaries"]] == [ids["new"]]
    assert [r["memoryRecordId"] for r in found] == [ids["old"]]
    assert both["memoryRecordSummaries"] == []  # AND-ed
    (fetched,) = listed["memoryRecordSummaries"]
    assert fetched["metadata"]["seen"]["dateTimeValue"] == datetime(2026, 3, 20, tzinfo=UTC)
