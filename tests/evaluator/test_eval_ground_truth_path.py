"""Scoring reads a numeric target's ground truth through the target client in its scoring context
(the orchestrator's sandboxed services), never by running the target in the scoring process; the
episode loop passes that client in the context it gives its score hook."""

from __future__ import annotations

import pytest
from support.evaluator_helpers import numeric_target

import interp_harness.evaluator.numeric.scorer as numeric_scorer
import interp_harness.evaluator.scoring as scoring
from interp_harness.evaluator.api import EpisodeStats
from interp_harness.evaluator.numeric import grid_inputs
from interp_harness.evaluator.scorer import ScoringContext
from interp_harness.function_store.runtime import build_runner
from interp_harness.harness.sandbox.code_runner import run_in_sandbox

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

    monkeypatch.setattr(numeric_scorer, "ground_truth_in_process", no_local_runs)
    return t, calls, via_client


async def test_ground_truth_comes_through_the_target_client(target_and_calls) -> None:  # type: ignore[no-untyped-def]
    t, calls, via_client = target_and_calls
    ctx = ScoringContext(call_target=via_client, code_runner=run_in_sandbox)
    res = {r.metric: r for r in await scoring.score_episode(t, ANSWER, EpisodeStats(), ctx)}
    assert calls == [(t.id, grid_inputs())]
    assert (res["code_success"].status, res["code_success"].value) == ("ok", 1.0)
    assert res["nmse"].value == pytest.approx(0.0, abs=1e-12)


async def test_without_a_client_the_target_never_runs_in_process(target_and_calls) -> None:  # type: ignore[no-untyped-def]
    """No target client in the context: an infrastructure error state (never a 0), and the
    target is not run here instead."""
    t, calls, _ = target_and_calls
    ctx = ScoringContext(code_runner=run_in_sandbox)
    res = {r.metric: r for r in await scoring.score_episode(t, ANSWER, EpisodeStats(), ctx)}
    assert calls == [] and "code_success" not in res
    err = res["evaluator"]
    assert err.status == "error" and err.error_category == "infrastructure"
    assert "no target client in the scoring context" in err.error


async def test_without_a_code_runner_agent_code_never_runs_unsandboxed(target_and_calls) -> None:  # type: ignore[no-untyped-def]
    t, calls, via_client = target_and_calls
    ctx = ScoringContext(call_target=via_client)
    res = {r.metric: r for r in await scoring.score_episode(t, ANSWER, EpisodeStats(), ctx)}
    assert calls == [(t.id, grid_inputs())]
    code = res["code_success"]
    assert code.status == "error" and code.error_category == "sandbox"
    assert "no code runner" in code.error
