"""The neuron scorer's simulation scores on a released GPT-2 XL neuron (shipped activations, no
model): with the lexical simulator, the agent's top-and-random score recomputed here from the
texts it stores, beside the GPT-4 explanation's ceiling; a simulator that cannot be reached, or
settings that make no simulator, are `judge` error states of every simulation metric while the
observational scores stand, never a 0."""

from __future__ import annotations

import statistics

import pytest
from support import free_port

from interp_harness.evaluator.api import EpisodeStats
from interp_harness.evaluator.neurons.scorer import NeuronScorer
from interp_harness.evaluator.scorer import ScoringContext
from interp_harness.evaluator.simulation.simulator import SimulatorSettings
from interp_harness.function_store.models import Target, model_target
from interp_harness.function_store.token_activations import neuron_release as data

SIMULATION = {
    "simulation_top_random",
    "simulation_all",
    "simulation_top_random_ceiling",
    "simulation_all_ceiling",
}
ANSWER = '[DESCRIPTION]: fires on "then"'
EDGE = " \t\n.,;:!?()[]{}\"'“”"


def _neuron() -> Target:
    rec = data.load()[0]  # 'the word "then" and other words that express ... next ...'
    spec = {"model": "gpt2-xl", "layer": rec.layer, "index": rec.index}
    spec["component"] = "mlp_activation"
    tid = f"neuron/gpt2-xl/{rec.neuron}"
    return model_target(tid, "neuron", "neurons", "gpt2-xl", "neuron", spec, rec.explanation)


async def _scores(ctx: ScoringContext) -> dict:
    res = await NeuronScorer().score(_neuron(), ANSWER, EpisodeStats(), ctx)
    return {r.metric: r for r in res}


async def test_lexical_scores_and_the_reference_ceiling() -> None:
    by = await _scores(ScoringContext())
    for m in SIMULATION:
        assert by[m].status == "ok" and -1.0 <= by[m].value <= 1.0, by[m]
        assert by[m].details["simulator"] == "lexical"
    top = by["simulation_top_random"].details
    assert top["texts"] == 10
    true, said = [], []
    for text in top["per_text"]:
        for tok, level in zip(text["tokens"], text["true"], strict=True):
            if level is not None:
                true.append(level)
                said.append(10.0 if tok.strip(EDGE).lower() == "then" else 0.0)
    assert len(set(said)) == 2  # the word is among the scored tokens
    assert by["simulation_top_random"].value == pytest.approx(statistics.correlation(true, said))


@pytest.mark.parametrize("broken", ["unreachable", "no simulator"])
async def test_a_simulator_failure_is_a_judge_error_beside_standing_f1(broken: str) -> None:
    if broken == "unreachable":
        url = f"http://127.0.0.1:{free_port()}/v1"
        ctx = ScoringContext(simulator_settings=SimulatorSettings(url=url, max_retries=0))
    else:

        def refuse(settings: SimulatorSettings):  # type: ignore[no-untyped-def]
            raise ValueError("simulator settings refused")

        ctx = ScoringContext(simulator_factory=refuse)
    by = await _scores(ctx)
    assert by["observational_f1"].status == "ok" and by["observational_f1"].value is not None
    assert by["observational_f1_ceiling"].status == "ok"
    for m in SIMULATION:
        assert by[m].status == "error" and by[m].error_category == "judge", by[m]
        assert by[m].value is None and by[m].error


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("[DESCRIPTION]:   ", "no [DESCRIPTION] in the final answer"),
        (
            "[DESCRIPTION]: " + "then " * 801,  # 4,005 characters, 4,004 once stripped
            "the description is 4,004 characters (4,004 bytes of UTF-8); {} reads at most "
            "4,000 bytes",
        ),
    ],
    ids=["missing", "too-long"],
)
async def test_an_unreadable_description_is_the_agents_worst_score(answer: str, reason: str):
    """No description (once an `agent` error state, left out of the means) or one past the bound
    is the agent's score: 0 for P/R/F1, -1 for the simulation correlations, with the reason; the
    GPT-4 explanation's ceilings are the same as beside a readable answer."""
    res = await NeuronScorer().score(_neuron(), answer, EpisodeStats(), ScoringContext())
    by = {r.metric: r for r in res}
    readable = await _scores(ScoringContext())
    worst = {"observational_precision": 0.0, "observational_recall": 0.0}
    worst |= {"observational_f1": 0.0, "simulation_top_random": -1.0, "simulation_all": -1.0}
    for m, v in worst.items():
        said = reason.format(m.split("_")[0])  # the family that refused it names itself
        assert (by[m].status, by[m].value, by[m].details["failure"]) == ("ok", v, said), by[m]
    assert "iia" not in by  # no task is matched from an unread description
    ceilings = (
        "observational_f1_ceiling",
        "simulation_top_random_ceiling",
        "simulation_all_ceiling",
    )
    for m in ceilings:
        assert by[m].status == "ok" and by[m].value == readable[m].value, m
