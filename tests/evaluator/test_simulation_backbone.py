"""The endpoint simulator on the project's own backbone server (SmolLM2-135M, the shared
session server): every slot lands on the real tokenizer's `unknown` token, and the prediction
there is the expected value this test computes itself from the same echoed logprobs; a score
through the scoring context names the served model. Each test makes one or two full prompt
passes on a CPU (10-20 s on a loaded 2-core machine): marked slow."""

from __future__ import annotations

import asyncio
import math

import httpx
import pytest

from interp_harness.evaluator.scorer import ScoringContext
from interp_harness.evaluator.simulation import prompt
from interp_harness.evaluator.simulation.scoring import Excerpt, score_explanations
from interp_harness.evaluator.simulation.simulator import EndpointSimulator, SimulatorSettings

TOKENS = ["The", " games", " of", " 2000", " were", " held", " in", " Sydney", "."]
EXPLANATION = 'the year "2000"'


@pytest.mark.slow
def test_slots_and_expected_values_on_the_real_server(backbone_url: str) -> None:
    url = f"{backbone_url}/v1"
    sim = EndpointSimulator(SimulatorSettings(url=url, top_logprobs=20))

    async def go():
        try:
            return await sim.simulate(EXPLANATION, [TOKENS])
        finally:
            await sim.aclose()

    out = asyncio.run(go())
    assert sim.name.startswith("SmolLM2-135M-Instruct at ")
    # the same request by hand; the expected value computed here from the listed alternatives
    p = prompt.build(EXPLANATION, TOKENS)
    body = {"prompt": p.text, "echo": True, "logprobs": 20, "max_tokens": 1}
    lp = httpx.post(f"{url}/completions", json=body, timeout=300).json()["choices"][0]["logprobs"]
    where = {off: i for i, off in enumerate(lp["text_offset"])}
    by_hand = []
    for at in p.slots:
        i = where[at]  # SmolLM2 keeps the tab apart: a token starts exactly at each slot
        assert lp["tokens"][i] == "unknown"
        levels = {str(k): 0.0 for k in range(11)}
        for tok, v in lp["top_logprobs"][i].items():
            if tok.strip() in levels:
                levels[tok.strip()] += math.exp(v)
        total = sum(levels.values())
        by_hand.append(sum(int(k) * q for k, q in levels.items()) / total if total else 0.0)
    assert out[0] == pytest.approx(by_hand, abs=1e-4)
    assert all(0.0 <= v <= 10.0 for v in out[0])


@pytest.mark.slow
def test_scores_through_the_context_name_the_model(backbone_url: str) -> None:
    ctx = ScoringContext(simulator_settings=SimulatorSettings(url=f"{backbone_url}/v1"))
    excerpts = [
        Excerpt(TOKENS, [0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
        Excerpt(["It", " rained", "."], [0.0, 0.1, 0.0]),
    ]

    async def go():
        sim = ctx.simulator()
        try:
            return await score_explanations(EXPLANATION, None, excerpts, sim, seed=0)
        finally:
            await sim.aclose()

    res = asyncio.run(go())
    assert [r.metric for r in res] == ["simulation_top_random", "simulation_all"]
    for r in res:
        assert r.status == "ok" and r.value is not None and -1.0 <= r.value <= 1.0
        assert r.details["simulator"].startswith("SmolLM2-135M-Instruct at ")
        assert (r.details["texts"], r.details["tokens"]) == (2, 12)
