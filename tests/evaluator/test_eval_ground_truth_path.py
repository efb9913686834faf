"""Scoring reads a numeric target's ground truth through the orchestrator's target client (its
sandboxed services) when one is set, never by running the target in the scoring process; the
episode loop sets it while its score hook runs."""

from __future__ import annotations

import pytest
from evaluator_helpers import numeric_target

import evaluator.scoring as scoring
from evaluator.api import EpisodeStats, target_call
from evaluator.numeric import grid_inputs
from function_store.runtime import build_runner

ANSWER = "[DESCRIPTION]: a line\n[CODE]: ```python\ndef f(x):\n    return 0.5 * x + 3\n```"


@pytest.fixture
def target_and_calls(monkeypatch):  # type: ignore[no-untyped-def]
    t = numeric_target("gt-path", lambda x: 0.5 * x + 3.0)
    runner = build_runner(t)  # built before the patch: it plays the sandboxed service
    calls: list[tuple[str, list[str]]] = []

    async def via_client(target_id: str, inputs):  # type: ignore[no-untyped-def]
        calls.append((target_id, list(inputs)))
        return runner.call(list(inputs))

    def no_local_runs(*_a, **_k):  # type: ignore[no-untyped-def]
        raise RuntimeError("target code ran in the scoring process")

    monkeypatch.setattr(scoring, "build_runner", no_local_runs)
    return t, calls, via_client


async def test_ground_truth_comes_through_the_target_client(target_and_calls) -> None:  # type: ignore[no-untyped-def]
    t, calls, via_client = target_and_calls
    token = target_call.set(via_client)
    try:
        res = {r.metric: r for r in await scoring.score_episode(t, ANSWER, EpisodeStats())}
    finally:
        target_call.reset(token)
    assert calls == [(t.id, grid_inputs())]
    assert (res["code_success"].status, res["code_success"].value) == ("ok", 1.0)
    assert res["nmse"].value == pytest.approx(0.0, abs=1e-12)


async def test_without_a_client_the_target_runs_in_process(target_and_calls) -> None:  # type: ignore[no-untyped-def]
    t, calls, _ = target_and_calls
    res = {r.metric: r for r in await scoring.score_episode(t, ANSWER, EpisodeStats())}
    assert calls == []
    assert res["code_success"].status == "error" and res["code_success"].error_category == "target"
    assert "target code ran in the scoring process" in res["code_success"].error
