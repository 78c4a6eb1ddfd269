"""The cost model's arithmetic (benchmarks/cost_model.py, cost_units.py): units to dollars,
DynamoDB's billing rules on item sizes, and workloads scaled to a month. No AWS, no moto: the
instrumented runs live in ``python -m benchmarks.cost``."""

from __future__ import annotations

import pytest

from benchmarks.cost_model import (
    MESSAGES_PER_ROLLOUT,
    Usage,
    Workload,
    agentcore,
    by_service,
    dollars,
    estimated_tokens,
    volumes,
    xray_traces,
)
from benchmarks.cost_prices import DAYS_PER_MONTH, PRICES, SECONDS_PER_MONTH
from benchmarks.cost_units import (
    IndexShape,
    index_write_units,
    item_size,
    read_units,
    write_units,
)

PERSONAL = Workload(
    key="personal",
    title="Personal assistant",
    actors=1,
    active_share=1.0,
    sessions_per_active_day=5,
    messages_per_session=10,
    recalls_per_active_day=5,
    records_per_actor=1000,
)


def test_a_million_units_cost_exactly_their_listed_price() -> None:
    lines = dollars(Usage(dynamodb_wru=1e6, dynamodb_rru=1e6, lambda_gb_seconds=1))

    assert lines["dynamodb.wru"] == pytest.approx(PRICES["dynamodb.wru"].usd)
    assert lines["dynamodb.rru"] == pytest.approx(PRICES["dynamodb.rru"].usd)
    assert lines["lambda.gb_second"] == pytest.approx(PRICES["lambda.gb_second"].usd)
    assert sum(lines.values()) == pytest.approx(
        PRICES["dynamodb.wru"].usd + PRICES["dynamodb.rru"].usd + PRICES["lambda.gb_second"].usd
    )


def test_stored_gigabytes_are_billed_for_the_table_and_its_point_in_time_recovery() -> None:
    per_service = by_service(dollars(Usage(dynamodb_gb_months=10)))

    expected = 10 * (PRICES["dynamodb.storage"].usd + PRICES["dynamodb.pitr"].usd)
    assert per_service["DynamoDB"] == pytest.approx(expected)
    assert sum(per_service.values()) == pytest.approx(expected)


def test_usage_adds_and_scales_every_quantity() -> None:
    one = Usage(sqs_requests=3, apigw_requests=2, log_gb=0.5)

    assert one * 4 + one == Usage(sqs_requests=15, apigw_requests=10, log_gb=2.5)


def test_a_month_of_the_personal_assistant_counts_fifty_messages_a_day() -> None:
    month = volumes(PERSONAL)

    assert month.messages == pytest.approx(50 * DAYS_PER_MONTH)
    assert month.recalls == pytest.approx(5 * DAYS_PER_MONTH)
    # 10 turns a session: one rollout at the sixth turn, the last four at the idle timeout.
    assert month.rollouts_by_count == pytest.approx(5 * DAYS_PER_MONTH)
    assert month.rollouts_by_idle == pytest.approx(5 * DAYS_PER_MONTH)
    assert month.records == 1000


def test_a_session_that_fills_whole_rollouts_leaves_nothing_for_the_idle_timeout() -> None:
    exact = Workload(
        **{**PERSONAL.__dict__, "messages_per_session": 3 * MESSAGES_PER_ROLLOUT, "key": "x"}
    )

    month = volumes(exact)

    assert month.rollouts_by_count == pytest.approx(3 * month.sessions)
    assert month.rollouts_by_idle == 0


def test_ten_times_the_users_is_ten_times_the_traffic_and_the_records() -> None:
    small = volumes(PERSONAL)
    large = volumes(Workload(**{**PERSONAL.__dict__, "actors": 10}))

    assert large.messages == pytest.approx(10 * small.messages)
    assert large.rollouts == pytest.approx(10 * small.rollouts)
    assert large.records == 10 * small.records


def test_agentcore_bills_events_records_and_retrievals_at_its_published_prices() -> None:
    month = volumes(PERSONAL)

    built_in = agentcore(month, built_in=True)
    self_managed = agentcore(month, built_in=False)

    assert built_in["events"] == pytest.approx(month.messages / 1000 * 0.25)
    assert built_in["records stored"] == pytest.approx(0.75)
    assert self_managed["records stored"] == pytest.approx(0.25)
    assert built_in["retrievals"] == pytest.approx(month.recalls / 1000 * 0.50)


def test_item_size_counts_names_and_values_as_dynamodb_does() -> None:
    item = {"pk": {"S": "R#m|a"}, "vec": {"B": b"\x00" * 16}, "n": {"N": "1200"}}

    # "pk" 2 + 5, "vec" 3 + 16, "n" 1 + (2 significant digits: 1 byte + 1).
    assert item_size(item) == 7 + 19 + 3
    assert item_size({"s": {"S": "é"}}) == 1 + 2  # UTF-8 bytes, not characters


def test_reads_round_up_to_four_kilobytes_and_eventual_consistency_halves_them() -> None:
    assert read_units(4096, consistent=True) == 1
    assert read_units(4097, consistent=True) == 2
    assert read_units(4097, consistent=False) == 1
    assert read_units(0, consistent=False) == 0.5  # finding nothing still costs a read


def test_a_transactional_write_costs_twice_the_larger_of_before_and_after() -> None:
    small = {"pk": {"S": "x"}}
    large = {"pk": {"S": "x"}, "d": {"S": "y" * 1500}}

    assert write_units((), small, large, transactional=False) == (2, 0)
    assert write_units((), large, small, transactional=True) == (4, 0)


def test_an_index_entry_whose_key_moves_costs_a_delete_and_a_put() -> None:
    due = IndexShape(
        name="due", keys=("dpk", "dsk"), table_keys=("pk", "sk"), projection="KEYS_ONLY"
    )
    base = {"pk": {"S": "p"}, "sk": {"S": "s"}}
    first = {**base, "dpk": {"S": "DI#0"}, "dsk": {"S": "1"}}
    moved = {**base, "dpk": {"S": "DI#0"}, "dsk": {"S": "2"}}

    assert index_write_units(due, base, first) == 1
    assert index_write_units(due, first, moved) == 2
    assert index_write_units(due, moved, base) == 1
    assert index_write_units(due, base, base) == 0  # not in the sparse index: free


def test_xray_records_every_trace_below_one_a_second_and_five_percent_above() -> None:
    assert xray_traces(1000) == 1000
    busy = 3 * SECONDS_PER_MONTH
    assert xray_traces(busy) == pytest.approx(SECONDS_PER_MONTH + 0.05 * 2 * SECONDS_PER_MONTH)


def test_tokens_are_estimated_as_a_quarter_of_the_bytes_rounded_up() -> None:
    assert estimated_tokens(8) == 2
    assert estimated_tokens(9) == 3


def test_the_sweep_wakes_at_most_three_times_a_rollout_and_once_a_minute() -> None:
    from benchmarks.cost_compose import WAKE_UPS_PER_ROLLOUT, sweep_wake_ups

    idle = volumes(Workload(**{**PERSONAL.__dict__, "active_share": 0.0, "key": "idle"}))
    personal = volumes(PERSONAL)
    crowd = volumes(Workload(**{**PERSONAL.__dict__, "actors": 10_000, "key": "crowd"}))

    assert sweep_wake_ups(idle) == 0  # nothing appended: nothing armed, nothing invoked
    assert WAKE_UPS_PER_ROLLOUT == 3
    assert sweep_wake_ups(personal) == pytest.approx(3 * personal.rollouts)
    assert sweep_wake_ups(crowd) == SECONDS_PER_MONTH / 60  # one wake-up a minute at most
