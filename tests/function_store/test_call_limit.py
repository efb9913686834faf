"""A target call's time limit (function_store/call_clock.py, issue 40): the operator's base, plus
the budget a model-backed family's record declares for the call's size, under a ceiling; time a
model service reports as queue wait is not counted; and a call that runs out says which setting
to change, with its value."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import pytest

from interp_harness.function_store.benchmark import benchmark
from interp_harness.function_store.call_clock import (
    CURRENT,
    CallClock,
    CallOverTime,
    call_limit,
    model_request,
)
from interp_harness.function_store.models import CallOutput
from interp_harness.function_store.service.app import run_limited

TEXTS = ["The cat sat on the mat."] * 16  # 16 texts, 23 characters each


def test_numeric_calls_keep_the_base_and_model_backed_calls_scale_with_their_size() -> None:
    numeric = benchmark("numeric")
    assert numeric.call_budget is None
    assert call_limit(10, 300, ["1"] * 10, "numeric", numeric.call_budget).seconds == 10
    for family in ("neurons", "sae", "ravel", "entities", "relations"):
        budget = benchmark(family).call_budget
        assert budget is not None and budget.per_input_s > 0, family
        small = call_limit(10, 300, TEXTS[:1], family, budget).seconds
        large = call_limit(10, 300, TEXTS, family, budget).seconds
        assert 10 < small < large <= 300, (family, small, large)
    sae = benchmark("sae").call_budget
    assert sae is not None
    expected = 10 + 16 * sae.per_input_s + 16 * 23 / 1000 * sae.per_kchar_s
    assert call_limit(10, 300, TEXTS, "sae", sae).seconds == pytest.approx(expected)
    # the ceiling caps the budget; a ceiling below the operator's base never cuts the base
    assert call_limit(10, 12, TEXTS, "sae", sae).seconds == 12
    assert call_limit(60, 20, TEXTS, "sae", sae).seconds == 60


def test_the_messages_name_the_settings_their_values_and_what_to_change() -> None:
    budget = benchmark("sae").call_budget
    assert budget is not None
    clock = CallClock(call_limit(10, 300, TEXTS, "sae", budget))
    clock.queued_s = 4.0
    msg = clock.limit_message(clock.started + 30.0)
    assert f"its {clock.limit.seconds:.1f} s time limit" in msg, msg
    assert "HARNESS_SERVICE_CALL_TIMEOUT_S=10 s" in msg
    assert f"16 inputs × {budget.per_input_s:g} s" in msg, msg
    assert f"368 characters × {budget.per_kchar_s:g} s per 1000" in msg, msg
    assert "HARNESS_SERVICE_CALL_CEILING_S=300 s" in msg
    # 30 s passed, 4 s of it queued
    assert "26.0 s counted; 4.0 s in the model service's queue not counted" in msg, msg
    assert "the operator raises HARNESS_SERVICE_CALL_TIMEOUT_S" in msg
    numeric = CallClock(call_limit(6, 300, ["1"], "numeric", None)).limit_message(time.monotonic())
    assert "its 6.0 s time limit" in numeric and "HARNESS_SERVICE_CALL_TIMEOUT_S=6 s," in numeric
    assert "record" not in numeric
    ceiling = clock.ceiling_message()
    assert "HARNESS_SERVICE_CALL_CEILING_S=300 s" in ceiling
    assert "the operator raises HARNESS_SERVICE_CALL_CEILING_S" in ceiling


def _in_call(clock: CallClock, fn):  # type: ignore[no-untyped-def]
    token = CURRENT.set(clock)
    try:
        return fn()
    finally:
        CURRENT.reset(token)


def _request(seconds: float, queue_s: float | None) -> None:
    with model_request() as report:
        time.sleep(seconds)
        report(queue_s)


def test_reported_queue_wait_is_not_counted_and_cannot_excuse_more_than_the_request_took() -> None:
    clock = CallClock(call_limit(0.3, 60, ["x"], "", None))
    _in_call(clock, lambda: _request(0.5, queue_s=0.45))  # 0.05 s of its own: within 0.3 s
    assert clock.queued_s == pytest.approx(0.45)
    assert not clock.in_flight
    clock = CallClock(call_limit(0.3, 60, ["x"], "", None))
    with pytest.raises(CallOverTime, match="HARNESS_SERVICE_CALL_TIMEOUT_S=0.3 s"):
        _in_call(clock, lambda: _request(0.5, queue_s=None))  # a service that reports nothing
    clock = CallClock(call_limit(0.3, 60, ["x"], "", None))
    with pytest.raises(CallOverTime):  # a report of an hour excuses only the 0.5 s it was out
        _in_call(clock, lambda: (time.sleep(0.4), _request(0.5, queue_s=3600.0)))
    assert clock.queued_s <= 0.6
    _request(0.01, queue_s=1.0)  # outside a target service: no clock, nothing to check


class _SleepyRunner:
    """A target whose calls take their time: `own_s` of its own, then one model request that is
    out `queued_s` (as long as it reports waiting in the service's queue)."""

    def __init__(self, own_s: float, queued_s: float = 0.0) -> None:
        self.own_s, self.queued_s = own_s, queued_s

    def call(self, inputs: Sequence[str]) -> list[CallOutput]:
        time.sleep(self.own_s)
        if self.queued_s:
            _request(self.queued_s, queue_s=self.queued_s)
        return [CallOutput(input=x, output="ok") for x in inputs]


def test_the_service_fails_a_slow_call_at_its_limit_and_waits_for_a_queued_request() -> None:
    async def go(runner: _SleepyRunner, base_s: float, ceiling_s: float) -> list[CallOutput]:
        return await run_limited(call_limit(base_s, ceiling_s, ["x"]), runner, ["x"])

    with pytest.raises(CallOverTime) as e:
        asyncio.run(go(_SleepyRunner(own_s=2.0), base_s=0.5, ceiling_s=60))
    assert "its 0.5 s time limit" in str(e.value)
    # a request queued well past the base limit: not the target's time, the call answers
    [out] = asyncio.run(go(_SleepyRunner(own_s=0.0, queued_s=1.5), base_s=0.5, ceiling_s=60))
    assert out.output == "ok"
    # ... except past the ceiling, which counts every second
    with pytest.raises(CallOverTime) as e:
        asyncio.run(go(_SleepyRunner(own_s=0.0, queued_s=3.0), base_s=0.5, ceiling_s=1.0))
    assert "HARNESS_SERVICE_CALL_CEILING_S=1 s" in str(e.value)


def test_calls_waiting_for_a_service_thread_are_not_charged_for_the_wait() -> None:
    """40 calls at once (more than asyncio's default executor has threads on any machine), each
    holding its thread while its model request waits 1.5 s in the queue: every one answers."""

    async def go() -> list[list[CallOutput]]:
        limit = call_limit(0.5, 60, ["x"])
        runner = _SleepyRunner(own_s=0.0, queued_s=1.5)
        return await asyncio.gather(*(run_limited(limit, runner, ["x"]) for _ in range(40)))

    results = asyncio.run(go())
    assert [out.output for [out] in results] == ["ok"] * 40
