"""The neuron family's floor agent, `neuron-fixed-explanation`: registered as a built-in, planned
beside any agent's neuron run (unless the run says `floor: false`), answering at once with one
fixed explanation, and scoring below the reference explanations on Huang et al.'s planted case.
The run through the REST API with the floor's report rows is in test_neuron_rest.py."""

from __future__ import annotations

import asyncio
import statistics

import pytest
from support.evaluator_helpers import summary

from interp_harness.agents import get_agent, list_agents, resolve_agent
from interp_harness.agents.base import Message
from interp_harness.agents.scripted_neuron import ScriptedNeuronAgent
from interp_harness.evaluator.api import EpisodeSummary, ScoreResult
from interp_harness.evaluator.neurons import planted
from interp_harness.evaluator.neurons.simulation import split_words
from interp_harness.evaluator.parsing import parse_answer
from interp_harness.evaluator.report import build_report
from interp_harness.evaluator.simulation.scoring import simulate
from interp_harness.evaluator.simulation.simulator import LexicalSimulator
from interp_harness.evaluator.token_activations import observational as O
from interp_harness.evaluator.token_activations.membership import LexicalMembership
from interp_harness.evaluator.token_activations.testset import carriers
from interp_harness.function_store.catalog import Catalog
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.episode.prompts import task_prompt
from interp_harness.harness.runs.plan import plan_floors

FLOOR = "neuron-fixed-explanation"
# written out here, not imported: what the floor must answer
ANSWER = (
    '[DESCRIPTION]: The neuron fires on colour words: "red", "blue", "green", "yellow", "black".'
)


def _smollm2_targets(n: int):  # type: ignore[no-untyped-def]
    return Catalog().list(dataset="neuron", variant="smollm2")[:n]


def test_neuron_runs_plan_the_floor_on_the_same_targets() -> None:
    targets = _smollm2_targets(2)
    spec = {"agent": "scripted-neuron", "dataset": "neuron", "family": "neurons"}
    [floor] = plan_floors(RunSpec(**spec), ScriptedNeuronAgent, targets)
    assert floor.agent == FLOOR and floor.target_ids == [t.id for t in targets]
    assert floor.agent_cls is resolve_agent(FLOOR)[0]
    assert plan_floors(RunSpec(**spec, floor=False), ScriptedNeuronAgent, targets) == []
    # the floor's own run has no floor of itself
    cls = resolve_agent(FLOOR)[0]
    assert plan_floors(RunSpec(**{**spec, "agent": FLOOR}), cls, targets) == []


def test_the_floor_is_a_builtin_that_answers_without_calling_the_target() -> None:
    cls, source = resolve_agent(FLOOR)
    assert source == "builtin" and cls.families == frozenset({"neurons"})
    info = next(i for i in list_agents() if i.name == FLOOR)
    assert info.families == ["neurons"] and info.description
    [target] = _smollm2_targets(1)
    prompt = task_prompt(target.public.prompt_family, target.exemplars)
    reply = asyncio.run(get_agent(FLOOR).step([Message(role="user", content=prompt)]))
    assert reply.content == ANSWER  # the first message is the answer: no PYTHON(...) call


def _planted_scores(explanation: str) -> tuple[float | None, float | None, float | None]:
    """(simulation on top-and-random, on all texts, observational F1) of `explanation` on the
    planted neuron (activation 1 on " 2000" only), lexical simulator. The F1's test set is the
    planted texts plus carrier sentences of the explanation's claimed strings (the Type I probes
    the live scorer adds)."""
    texts = planted.texts(n_other=200, n_each=5, seed=0)
    sim = asyncio.run(simulate(explanation, texts, LexicalSimulator(), 0))
    member = LexicalMembership(explanation)
    words = [list(t.tokens) for t in texts]
    words += [split_words(s) for s in carriers(sorted(member.members))]
    obs = [
        O.Observation("planted", any(member(w) for w in ws), any(w.strip() == "2000" for w in ws))
        for ws in words
    ]
    return sim.top_random.value, sim.all.value, O.prf(O.counts(obs)).f1


def test_the_floor_scores_below_the_references_on_the_planted_case() -> None:
    reply = asyncio.run(get_agent(FLOOR).step([Message(role="user", content="explain it")]))
    floor = _planted_scores(parse_answer(reply.content).description)
    faithful = _planted_scores('"2000"')
    unfaithful = _planted_scores(planted.EXPLANATION)  # the paper's "2000 and 2001"
    # by hand: no planted text holds a colour word, so the lexical prediction is constant (0 by
    # the score's rule) and only the 10 carrier sentences are claimed, none firing (F1 0)
    assert floor == (0.0, 0.0, 0.0)
    assert faithful == pytest.approx((1.0, 1.0, 1.0))  # predicted exactly where it fires; P = R = 1
    top, every, f1 = unfaithful
    # claimed: 10 planted texts and 4 carriers, 7 of them firing (5 + the 2 "2000" carriers)
    assert f1 == pytest.approx(2 * 7 / (14 + 7))
    assert top is not None and every is not None and min(top, every) > 0.5
    for i in range(3):
        assert floor[i] < min(faithful[i], unfaithful[i])  # type: ignore[operator]


def _summary(i: int, agent: str, value: float) -> EpisodeSummary:
    metrics = ("observational_f1", "simulation_top_random", "simulation_all")
    return summary(
        i,
        agent,
        family="neurons",
        dataset="neuron",
        variant="smollm2",
        target_id=f"neuron/smollm2/1:{i}",
        calls=0 if agent == FLOOR else 3,
        inputs=0,
        scores=[
            ScoreResult(metric=m, value=value, details={"simulator": "lexical"}) for m in metrics
        ],
    )


def test_the_report_has_the_floor_rows_and_says_when_they_are_missing() -> None:
    agent = [_summary(i, "scripted-neuron", v) for i, v in enumerate((0.4, 0.6))]
    floor = [_summary(i, FLOOR, v) for i, v in enumerate((0.1, 0.0))]
    rep = build_report(agent + floor)
    rows = {(r.agent, r.metric): r for r in rep.rows if r.family == "neurons"}
    for m in ("observational_f1", "simulation_top_random", "simulation_all"):
        assert abs(rows[("scripted-neuron", m)].value - statistics.fmean((0.4, 0.6))) < 1e-12
        assert abs(rows[(FLOOR, m)].value - statistics.fmean((0.1, 0.0))) < 1e-12
        assert rows[(FLOOR, m)].mean_target_calls == 0
    missing = f"no `{FLOOR}` baseline in this run: neurons scores have no floor to compare with"
    assert missing not in rep.notes
    assert missing in build_report(agent).notes  # a run with --no-floor
