"""An agent escapes a low score by breaking the scorer (issue 49, item 2). A 126,045-character
[DESCRIPTION] (under the 262,144-character message cap) made the LM simulator fail: the
simulation scores and both ceilings became `judge` error states, which reports leave out of the
means. A failure the agent's own answer causes is its score now: the metric's worst value with
the reason, the text never sent to a model server, the reference's ceiling computed as usual.

One loopback model server stands in for the operator's backbone, as the simulator (legacy
completions echoing the prompt with logprobs) and as the judge (chat completions). Like the
backbone it refuses a prompt longer than its context (a 400), and it records every request. The
simulator predicts 10 on a token its explanation quotes, else 0; the judge names the unit test's
right example, and answers "yes" to every delphi question. The targets: a released GPT-2 XL
neuron (shipped activations), a hand-made SAE latent (support.sae_cases), FIND-style string and
entity unit tests (support.evaluator_helpers). Expected values are worked out in the comments."""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Iterator

import pytest
from support import LoopbackHTTP, QuietHandler, chat_completion
from support.evaluator_helpers import string_target
from support.sae_cases import LATENT, RIGHT

from interp_harness.evaluator.api import EpisodeStats, EpisodeSummary
from interp_harness.evaluator.judge import JudgeSettings
from interp_harness.evaluator.neurons.scorer import NeuronScorer
from interp_harness.evaluator.report import build_report
from interp_harness.evaluator.sae import scorer as sae_scorer
from interp_harness.evaluator.scorer import ScoringContext
from interp_harness.evaluator.scoring import score_episode
from interp_harness.evaluator.simulation.simulator import SimulatorSettings
from interp_harness.function_store.models import Target, model_target
from interp_harness.function_store.token_activations import neuron_release as data

MARK = "escape-hatch"  # in the agent's text only: no request may carry it
SIZE = 126_045  # the description of the report
HUGE = ("fires on " + f"{MARK} " * SIZE)[: SIZE - 1] + "x"  # no edge space for the parser to strip
CONTEXT_CHARS = 32_768  # the stand-in's context, in characters
UNDER_TEST = re.compile(r"^What neuron 3 responds to: (.*)$", re.MULTILINE)
SLOT = re.compile(r"^(.*)\t(unknown)$", re.MULTILINE)


class ModelServer:
    """The stand-in backbone: what it received, by route."""

    def __init__(self) -> None:
        self.completions: list[str] = []  # simulator prompts
        self.chats: list[str] = []  # judge user messages

    def simulate(self, prompt: str) -> tuple[int, dict]:
        self.completions.append(prompt)
        if len(prompt) > CONTEXT_CHARS:  # the backbone's context_length_exceeded
            return 400, {"error": {"message": "prompt too long", "code": "context_length_exceeded"}}
        quoted = {q.lower() for q in re.findall(r'"([^"]+)"', UNDER_TEST.findall(prompt)[-1])}
        tops: list[dict[str, float] | None] = [None] * len(prompt)
        for m in SLOT.finditer(prompt):
            level = "10" if m.group(1).strip().lower() in quoted else "0"
            tops[m.start(2)] = {level: 0.0}  # probability 1
        lp = {"tokens": list(prompt), "text_offset": list(range(len(prompt))), "top_logprobs": tops}
        return 200, {"choices": [{"index": 0, "text": prompt, "logprobs": lp}]}

    def judge(self, user: str) -> tuple[int, dict]:
        self.chats.append(user)
        if len(user) > CONTEXT_CHARS:
            return 400, {"error": {"message": "prompt too long", "code": "context_length_exceeded"}}
        if "Example 1: input =" in user:  # FIND's unit tests: the right example is "abK"
            right = re.search(r"Example (\d): input = ab\d", user)
            return 200, chat_completion(f"[ANSWER]: {right.group(1) if right else 9}")
        return 200, chat_completion("Answer: 1")  # delphi: yes, every time


@pytest.fixture
def backbone() -> Iterator[tuple[ModelServer, str]]:
    server = ModelServer()

    class Handler(QuietHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_json(200, {"data": [{"id": "stand-in", "owned_by": "someone"}]})

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            if self.path == "/v1/completions":
                self.send_json(*server.simulate(body["prompt"]))
            else:
                self.send_json(*server.judge(body["messages"][-1]["content"]))

    http = LoopbackHTTP()
    http.serve(Handler)
    yield server, f"{http.url}/v1"
    http.close()


ANSWERS = {
    "huge": (
        f"[DESCRIPTION]: {HUGE}",
        "the description is 126,045 characters (126,045 bytes of UTF-8); {} reads at most 4,000 "
        "bytes",
    ),
    "missing": ("[DESCRIPTION]:   ", "no [DESCRIPTION] in the final answer"),
}


def _ctx(url: str, judge_model: str) -> ScoringContext:
    # a judge model name per test: ceilings are cached per target and judge model
    return ScoringContext(
        simulator_settings=SimulatorSettings(url=url, max_retries=0),
        judge_settings=JudgeSettings(
            provider="openai-compatible", url=url, model=judge_model, mode="generate"
        ),
    )


def _summary(target: Target, scores: list) -> EpisodeSummary:
    return EpisodeSummary(
        episode_id="e1", target_id=target.id, dataset=target.dataset, family=target.family,
        variant=target.variant, agent="attacker", status="completed", scores=scores,
    )  # fmt: skip


def _row(summary: EpisodeSummary, metric: str):  # type: ignore[no-untyped-def]
    rows = build_report([summary]).rows
    return next(r for r in rows if r.metric == metric and r.family == summary.family)


@pytest.mark.parametrize("case", ["huge", "missing"])
async def test_neuron_simulation_scores_the_agent_and_keeps_the_ceiling(backbone, case):
    server, url = backbone
    answer, reason = ANSWERS[case]
    rec = data.load()[0]  # the GPT-4 explanation quotes "then"
    spec = {"model": "gpt2-xl", "layer": rec.layer, "index": rec.index}
    spec["component"] = "mlp_activation"
    target = model_target(
        f"neuron/gpt2-xl/{rec.neuron}", "neuron", "neurons", "gpt2-xl", "neuron", spec,
        rec.explanation,
    )  # fmt: skip
    res = await NeuronScorer().score(target, answer, EpisodeStats(), _ctx(url, "unused"))
    by = {r.metric: r for r in res}
    for m, worst in (("simulation_top_random", -1.0), ("simulation_all", -1.0)):
        assert (by[m].status, by[m].value) == ("ok", worst), by[m]
        assert by[m].details["failure"] == reason.format("simulation")
    for m in ("observational_precision", "observational_recall", "observational_f1"):
        assert (by[m].status, by[m].value) == ("ok", 0.0), by[m]
        assert by[m].details["failure"] == reason.format("observational")
    for m in ("simulation_top_random_ceiling", "simulation_all_ceiling"):
        assert by[m].status == "ok" and -1.0 <= by[m].value <= 1.0, by[m]
    # only the reference was simulated: one request per held-out text, each under the context
    assert len(server.completions) == len(rec.items)
    shown = {UNDER_TEST.findall(p)[-1] for p in server.completions}
    assert shown == {rec.explanation}
    assert not any(MARK in p for p in server.completions) and server.chats == []
    # the report counts it: one scored episode at -1, no error left out of the mean
    row = _row(_summary(target, res), "simulation_top_random")
    assert (row.scored, row.value, row.errors) == (1, -1.0, {})


@pytest.mark.parametrize("case", ["huge", "missing"])
async def test_sae_scores_the_agent_and_keeps_the_ceilings(backbone, case, monkeypatch):
    server, url = backbone
    answer, reason = ANSWERS[case]
    # the latent is support.sae_cases' hand-made one: it fires on " Monday" / " Friday"
    monkeypatch.setattr(sae_scorer, "load_latent", lambda target: LATENT)
    target = model_target("sae/m/s/7", "sae", "sae", "m", "sae", {"sae": "s", "latent": 7}, RIGHT)
    ctx = _ctx(url, f"escape-{case}")
    res = await sae_scorer.SAEScorer().score(target, answer, EpisodeStats(), ctx)
    by = {r.metric: r for r in res}
    assert set(by) == set(sae_scorer.SAEScorer.metrics)
    for m in sae_scorer.SCORED:
        # correlations (the simulation's, Matthews') go down to -1, rates to 0
        worst = -1.0 if m.startswith("simulation_") or m.endswith("_mcc") else 0.0
        assert (by[m].status, by[m].value) == ("ok", worst), by[m]
        assert by[m].details["failure"] == reason.format(m.split("_")[0])
    # the reference 'fires on "Monday", "Friday"' simulated: levels after position 0 of the
    # 8 texts (Monday 3.0 of max 3.0 -> 10, Friday 2.0 -> 7, Friday 0.5 -> 2), predictions 10 on
    # the quoted words; 8 texts, so top-and-random is all of them
    true = [0, 0, 0, 10, 0] + [0, 7, 0] + [0] + [2, 0] + [0] * 8
    said = [0, 0, 0, 10, 0] + [0, 10, 0] + [0] + [10, 0] + [0] * 8
    for m in ("simulation_top_random_ceiling", "simulation_all_ceiling"):
        assert by[m].status == "ok"
        assert by[m].value == pytest.approx(statistics.correlation(true, said))
    # detection's ceiling with a judge that says yes to all 4 activating and 4 quiet texts:
    # accuracy 4/8, balanced (4/4 + 0/4) / 2, AUC one score for all: every pair tied, 1/2
    for m in ("accuracy", "balanced_accuracy", "auc"):
        assert by[f"detection_{m}_ceiling"].value == 0.5
        assert by[f"fuzzing_{m}_ceiling"].status == "ok"
    assert len(server.completions) == 8  # the reference's texts only
    assert all(UNDER_TEST.findall(p)[-1] == RIGHT for p in server.completions)
    assert server.chats and all(RIGHT in c for c in server.chats)
    assert not any(MARK in p for p in server.completions + server.chats)
    row = _row(_summary(target, res), "simulation_top_random")
    assert (row.scored, row.value, row.errors) == (1, -1.0, {})


@pytest.mark.parametrize("case", ["huge", "missing"])
@pytest.mark.parametrize("family", ["strings", "entities"])
async def test_judge_unit_tests_score_the_agent_and_keep_the_ceiling(backbone, case, family):
    server, url = backbone
    answer, reason = ANSWERS[case]
    target = string_target([(f"ab{k}", f"AB{k}") for k in range(10)], "upper-cases it", family)
    res = await score_episode(target, answer, EpisodeStats(), _ctx(url, f"esc-{family}-{case}"))
    by = {r.metric: r for r in res}
    for m in ("unit_test", "unit_test_strict"):
        assert (by[m].status, by[m].value) == ("ok", 0.0), by[m]
        assert by[m].details["failure"] == reason.format("unit_test")
    # the true description's 10 unit tests, every one answered right by the stand-in
    for m in ("unit_test_ceiling", "unit_test_ceiling_strict"):
        assert (by[m].status, by[m].value) == ("ok", 1.0), by[m]
    assert len(server.chats) == 10 and all("upper-cases it" in c for c in server.chats)
    assert not any(MARK in c for c in server.chats) and server.completions == []
    row = _row(_summary(target, res), "unit_test")
    assert (row.scored, row.value, row.errors) == (1, 0.0, {})
