"""``JobLog`` on DynamoDB, in the items table (``docs/dynamodb.md``)::

    items   pk = JB#<memory>   sk = S                         the memory's switches
            pk = JB#<memory>   sk = R#<job>#<run id>          one run (TTL: 90 days)
            pk = JM#<scope>    sk = <job>#<key>               a job's marker for the scope

Run ids begin with the start time, so one job's runs are a Query newest first.
"""

from __future__ import annotations

from datetime import timedelta

from cairn.jobs import JobName, JobRun, JobSwitches, check_marker, check_runs_limit
from cairn.models import Scope
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import key as item_key
from cairn.store.dynamodb.codec import n, s, text

RUN_LOG_DAYS = 90


def jobs_pk(memory_id: str) -> str:
    return f"JB#{memory_id}"


def markers_pk(scope: Scope) -> str:
    return f"JM#{scope}"


class DynamoDBJobLog:
    """Switches and runs in the items table; behaves exactly like ``InMemoryJobLog``."""

    def __init__(self, db: DynamoDBClient, table: str) -> None:
        self._db = db
        self._table = table

    def switches(self, memory_id: str) -> JobSwitches:
        item = self._db.call(
            "get_item",
            TableName=self._table,
            Key=item_key(jobs_pk(memory_id), "S"),
            ConsistentRead=True,
        ).get("Item")
        if item is None:
            return JobSwitches(memory_id=memory_id)
        return JobSwitches.model_validate_json(text(item, "d"))

    def set_switches(self, switches: JobSwitches) -> None:
        item = {**item_key(jobs_pk(switches.memory_id), "S"), "d": s(switches.model_dump_json())}
        self._db.call("put_item", TableName=self._table, Item=item)

    def record_run(self, run: JobRun) -> None:
        expires = run.finished_at + timedelta(days=RUN_LOG_DAYS)
        item = {
            **item_key(jobs_pk(run.memory_id), f"R#{run.job.value}#{run.run_id}"),
            "d": s(run.model_dump_json()),
            "expires_at": n(int(expires.timestamp())),
        }
        self._db.call("put_item", TableName=self._table, Item=item)

    def runs(self, memory_id: str, job: JobName, *, limit: int = 10) -> tuple[JobRun, ...]:
        check_runs_limit(limit)
        page = self._db.call(
            "query",
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :job)",
            ExpressionAttributeValues={":pk": s(jobs_pk(memory_id)), ":job": s(f"R#{job.value}#")},
            ScanIndexForward=False,
            Limit=limit,
            ConsistentRead=True,
        )
        return tuple(JobRun.model_validate_json(text(item, "d")) for item in page.get("Items", []))

    def marker(self, scope: Scope, job: JobName, key: str = "") -> str | None:
        item = self._db.call(
            "get_item",
            TableName=self._table,
            Key=item_key(markers_pk(scope), f"{job.value}#{key}"),
            ConsistentRead=True,
        ).get("Item")
        return text(item, "v") if item is not None else None

    def set_marker(self, scope: Scope, job: JobName, value: str, key: str = "") -> None:
        check_marker(key, value)
        item = {**item_key(markers_pk(scope), f"{job.value}#{key}"), "v": s(value)}
        self._db.call("put_item", TableName=self._table, Item=item)

    def erase_markers(self, scope: Scope) -> int:
        keys = [
            item_key(markers_pk(scope), text(item, "sk"))
            for item in self._db.query(
                TableName=self._table,
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues={":pk": s(markers_pk(scope))},
                ProjectionExpression="pk, sk",
                ConsistentRead=True,
            )
        ]
        self._db.batch_delete(self._table, keys)
        return len(keys)
