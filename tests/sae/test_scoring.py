"""SAE latent scoring on hand-made latents (expected values computed by hand in the comments):
observational P/R/F1, delphi's detection and fuzzing with the lexical decider, AUC, the judge
through the project's own server, and the error states."""

from __future__ import annotations

import statistics

import pytest
from support import free_port
from support.sae_cases import ACTIVE, LATENT, QUIET, RIGHT, ex

from interp_harness.evaluator.api import EpisodeStats
from interp_harness.evaluator.judge import JudgeSettings, OpenAICompatibleJudge
from interp_harness.evaluator.sae import classify, detection, fuzzing
from interp_harness.evaluator.sae.classify import Decision, Sample, auc, metrics
from interp_harness.evaluator.sae.scorer import (
    CEILING,
    METRICS,
    SCORED,
    SAEScorer,
    score_latent,
)
from interp_harness.evaluator.scorer import ScoringContext
from interp_harness.evaluator.simulation.simulator import SimulatorSettings
from interp_harness.evaluator.token_activations import observational_scores as scores
from interp_harness.evaluator.token_activations.testset import TokenActs
from interp_harness.function_store.models import Target, model_target
from interp_harness.function_store.sae import catalog


def _values(results) -> dict:
    return {r.metric: r.value for r in results}


async def test_right_explanation_is_perfect_lexically():
    v = _values(await score_latent(RIGHT, LATENT, classify.LexicalDecider(), seed=1))
    for m in METRICS:  # every example found, none claimed wrongly; the ceiling is the same text
        assert v[m] == 1.0 and v[m + CEILING] == 1.0, m


async def test_misleading_explanation_by_hand():
    res = await score_latent('fires on "weather"', LATENT, classify.LexicalDecider(), seed=1)
    v = _values(res)
    # claims the 2 "weather" texts, neither fires; the 4 firing texts unclaimed: P 0/2, R 0/4
    assert (v["observational_precision"], v["observational_recall"]) == (0.0, 0.0)
    assert v["observational_f1"] == 0.0
    # detection on 4 activating + 4 quiet texts: predicted active = the 2 weather texts
    # accuracy = TN/8 = 2/8; balanced = (0/4 + 2/4)/2; AUC: positives all 0, negatives {1,1,0,0}:
    # of 16 pairs none is won, 4·2 tie → 8·½/16
    assert v["detection_accuracy"] == pytest.approx(0.25)
    assert v["detection_balanced_accuracy"] == pytest.approx(0.25)
    assert v["detection_auc"] == pytest.approx(0.25)
    assert v["observational_f1" + CEILING] == 1.0  # the reference is still right
    # Matthews: tp 0, fp 2, fn 4, tn 2 of 8; (0·2 − 2·4) / √(claimed 2 · unclaimed 6 · fired 4 ·
    # quiet 4) = −8 / √192
    assert v["observational_mcc"] == pytest.approx(-8 / 192**0.5)
    assert v["observational_mcc" + CEILING] == 1.0
    # claiming all 8 texts: P 4/8, R 1, F1 2·½·1 / (½ + 1) = 2/3, whatever the explanation
    assert v["observational_precision_vacuous"] == v["observational_firing_share"] == 0.5
    assert v["observational_recall_vacuous"] == 1.0
    assert v["observational_f1_vacuous"] == pytest.approx(2 / 3)
    det = next(r for r in res if r.metric == "detection_accuracy")
    assert det.details["decider"] == "lexical" and det.details["counts"]["samples"] == 8


async def test_unrelated_explanation_is_at_chance():
    v = _values(await score_latent('fires on "cat"', LATENT, classify.LexicalDecider(), seed=1))
    # claims nothing: P undefined, R 0; detection says "no" to all 8: accuracy 4/8, AUC all ties
    assert v["observational_precision"] is None and v["observational_recall"] == 0.0
    assert v["observational_mcc"] == 0.0  # a claim that does not vary carries no information
    assert v["detection_accuracy"] == v["detection_balanced_accuracy"] == v["detection_auc"] == 0.5


def test_auc_by_hand():
    labels = [True, True, False, False, True, False]
    scores = [0.9, 0.4, 0.4, 0.1, 0.8, 0.7]
    # positives 0.9, 0.4, 0.8 vs negatives 0.4, 0.1, 0.7: 0.9 wins 3; 0.4 wins 1, ties 1; 0.8 wins 3
    assert auc(labels, scores) == pytest.approx(7.5 / 9)
    assert auc([True, False], [0.3, 0.3]) == 0.5
    assert auc([True, True], [0.1, 0.2]) is None  # one class only: undefined


def test_metrics_leave_unreadable_verdicts_out():
    s = [Sample("a", True), Sample("b", False), Sample("c", True)]
    m = metrics(s, [Decision(True, 0.9), Decision(True, 0.6), None])
    assert m["accuracy"] == 0.5 and m["balanced_accuracy"] == 0.5 and m["auc"] == 1.0
    assert m["counts"]["failed"] == 1


def test_highlight():
    toks = ["See", " you", " Friday", " then"]
    assert fuzzing.highlight(toks, {2}) == "See you <<Friday>> then"
    assert fuzzing.highlight(toks, {0, 1, 3}) == "<<See you>> Friday <<then>>"


FUZZ = [
    ex(("On", 0), (" Monday", 3.0), (" we", 0.5), (" rest", 0)),  # right {1}; low {0, 2, 3}
    ex((" Friday", 2.0), (" then", 0.1)),  # right {0}; low {1}
]


async def test_fuzzing_by_hand():
    samples = fuzzing.samples(FUZZ, seed=3)
    right = sorted(s.text for s in samples if s.label)
    assert right == [" <<Friday>> then", "On <<Monday>> we rest"]  # the space stays outside
    wrong = {s.tokens[0]: s for s in samples if not s.label}
    # as many wrong marks as the mean count of active tokens, rounded up: ceil((2 + 2) / 2) = 2,
    # among the tokens at or below 0.3 of the max; B has only one such token
    assert wrong[" Friday"].text == " Friday <<then>>"
    assert len(wrong["On"].marked) == 2 and set(wrong["On"].marked) <= {0, 2, 3}
    lex = classify.LexicalDecider()
    (good, bad) = await classify.run(
        fuzzing.TASK, lex, [classify.Job(RIGHT, samples), classify.Job('fires on "then"', samples)]
    )
    assert good["accuracy"] == good["balanced_accuracy"] == good["auc"] == 1.0
    # "then": right markings → no (TP 0 of 2); B's wrong one → yes, A's wrong one → no (TN 1 of 2)
    # accuracy 1/4, balanced (0 + 1/2)/2; AUC: positives {0, 0} vs negatives {1, 0}: 2 ties of 4
    assert bad["accuracy"] == bad["balanced_accuracy"] == bad["auc"] == pytest.approx(0.25)


def test_detection_sampling_is_balanced_seeded_and_spread_over_quantiles():
    many = [ex(("x", 0), (f" w{k}", float(k + 1))) for k in range(40)]
    quiet = [ex(("y", 0), (" z", 0.0)) for _ in range(60)]
    a = detection.samples(many, quiet, seed=5, n=10)
    assert a == detection.samples(many, quiet, seed=5, n=10)
    assert a != detection.samples(many, quiet, seed=6, n=10)
    pos = [s for s in a if s.label]
    assert len(pos) == 10 and len(a) == 20  # as many quiet texts as activating ones
    # acts 40..1 in 10 quantiles of 4 (quantile 0 the strongest), one drawn from each:
    # quantile q holds the acts 40 - 4q down to 37 - 4q
    for s in pos:
        act = int(s.tokens[1][2:]) + 1
        assert 37 - 4 * s.quantile <= act <= 40 - 4 * s.quantile
    assert sorted(s.quantile for s in pos) == list(range(10))


def _target() -> Target:
    return model_target("sae/m/s/7", "sae", "sae", "m", "sae", {"sae": "s", "latent": 7}, RIGHT)


async def test_empty_description_is_the_agents_worst_score_beside_the_ceilings(built_catalog):
    """No description used to be an `agent` error state, which reports leave out of the means
    (issue 49 item 2: an escape from a low score); it is now the agent's score, each metric's
    worst value with the reason, and the reference's ceilings are computed as usual."""
    ctx = ScoringContext(judge_settings=JudgeSettings(provider="none"))
    res = await SAEScorer().score(_target(), "[DESCRIPTION]:  ", EpisodeStats(), ctx)
    by = {r.metric: r for r in res}
    assert set(by) == set(SAEScorer.metrics)
    for m in SCORED:
        assert by[m].status == "ok", by[m]
        assert by[m].details["failure"] == "no [DESCRIPTION] in the final answer"
    # correlations (the simulation's, Matthews') go down to -1, rates to 0
    worst = {
        m: (-1.0 if m.startswith("simulation_") or m.endswith("_mcc") else 0.0) for m in SCORED
    }
    assert {m: by[m].value for m in SCORED} == worst
    # the reference (RIGHT) through the lexical decider and simulator, worked out in
    # test_scorer_reads_the_catalog_lexical_without_judge: every decided ceiling is 1, the
    # simulation's the correlation of these levels
    for m in METRICS:
        assert by[m + CEILING].status == "ok" and by[m + CEILING].value == 1.0, m
    true = [0, 0, 0, 10, 0] + [0, 7, 0] + [0] + [2, 0] + [0] * 8
    said = [0, 0, 0, 10, 0] + [0, 10, 0] + [0] + [10, 0] + [0] * 8
    for m in ("simulation_top_random", "simulation_all"):
        assert by[m + CEILING].status == "ok"
        assert by[m + CEILING].value == pytest.approx(statistics.correlation(true, said))


async def test_judge_down_is_a_judge_error_not_zero():
    judge = OpenAICompatibleJudge(
        f"http://127.0.0.1:{free_port()}/v1", "m", max_retries=0, mode="generate"
    )
    try:
        res = await score_latent(RIGHT, LATENT, classify.JudgeDecider(judge), seed=1)
    finally:
        await judge.aclose()
    by = {r.metric: r for r in res}
    assert by["observational_f1"].value == 1.0  # lexical, needs no judge
    for m in ("detection_auc", "fuzzing_accuracy", "fuzzing_auc" + CEILING):
        assert by[m].status == "error" and by[m].error_category == "judge" and by[m].value is None


def test_mentions_tokens_and_words():
    from interp_harness.evaluator.sae.observational import mentions
    from interp_harness.evaluator.token_activations.membership import LexicalMembership

    assert mentions(LexicalMembership('"tight end"'), ["The", " tight", " end", " ran"])  # 2 tokens
    assert mentions(LexicalMembership('fires on "ing"'), [" runn", "ing"])  # a quoted subword token
    assert not mentions(LexicalMembership('"on"'), ["Monday", " again"])  # words, not substrings
    assert mentions(LexicalMembership("weekdays like Monday"), ["On", " Monday"])  # content words


@pytest.fixture
def built_catalog(tmp_path, monkeypatch):
    """LATENT as latent 7 of a built SAE "s" in a private cache (the catalog's own model)."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))

    def ex(e: TokenActs) -> dict:
        return {"text": e.text, "tokens": e.tokens, "acts": e.values}

    rec = {"latent": 7, "density": 0.1, "max_act": 3.0, "top_tokens": [], "reference": RIGHT}
    rec |= {"activating": [ex(e) for e in ACTIVE], "non_activating": [ex(e) for e in QUIET]}
    report = {k: 0 for k in ("fve", "l0", "dead", "dense", "tokens", "held_out_tokens")}
    report |= {"train_texts": 0, "held_out_texts": 0, "steps": 0, "seconds": 0, "device": "cpu"}
    cat = catalog.SAECatalog.model_validate(
        {"sae": "s", "model": "m", "layer": 1, "component": "block_output", "report": report}
        | {"hook_name": "blocks.1.hook_resid_post", "architecture": "topk", "d_in": 4, "d_sae": 8}
        | {"latents": [rec]}
    )
    path = catalog.sae_dir("s") / catalog.CATALOG_FILE
    path.parent.mkdir(parents=True)
    path.write_text(cat.model_dump_json())


async def test_scorer_reads_the_catalog_lexical_without_judge(built_catalog):
    ctx = ScoringContext(judge_settings=JudgeSettings(provider="none"))
    res = await SAEScorer().score(_target(), f"[DESCRIPTION]: {RIGHT}", EpisodeStats(), ctx)
    assert {r.metric for r in res} == set(SAEScorer.metrics)
    vacuous = {r.metric: r.value for r in res if r.metric in scores.CHANCE}
    assert vacuous == {  # 4 of the 8 texts fire (hand-made catalog)
        "observational_precision_vacuous": 0.5,
        "observational_recall_vacuous": 1.0,
        "observational_f1_vacuous": pytest.approx(2 / 3),
        "observational_firing_share": 0.5,
    }
    decided = [r for r in res if not r.metric.startswith("simulation_") and r.metric not in vacuous]
    assert all(r.status == "ok" and r.value == 1.0 for r in decided)
    assert {r.details["decider"] for r in decided} == {"lexical"}
    # the simulation (no simulator URL: lexical): each text's tokens after position 0, the true
    # activation on the 0-10 scale of max 3.0 (Monday 3.0 -> 10, Friday 2.0 -> 7, 0.5 -> 2), the
    # lexical prediction 10 on Monday/Friday; 8 texts, so top-and-random is all of them
    true = [0, 0, 0, 10, 0] + [0, 7, 0] + [0] + [2, 0] + [0] * 8
    said = [0, 0, 0, 10, 0] + [0, 10, 0] + [0] + [10, 0] + [0] * 8
    sims = [r for r in res if r.metric.startswith("simulation_")]
    assert len(sims) == 4
    for r in sims:
        assert r.status == "ok" and r.value == pytest.approx(statistics.correlation(true, said))
        assert r.details["simulator"] == "lexical"
        assert (r.details["texts"], r.details["tokens"]) == (8, len(true))


async def test_scorer_with_judge_down(built_catalog):
    dead = JudgeSettings(url=f"http://127.0.0.1:{free_port()}/v1", max_retries=0, mode="generate")
    res = await SAEScorer().score(
        _target(), "[DESCRIPTION]: Monday", EpisodeStats(), ScoringContext(judge_settings=dead)
    )
    by = {r.metric: r for r in res}
    assert by["observational_f1"].value == pytest.approx(2 * (2 / 2) * (2 / 4) / (1 + 2 / 4))
    assert by["detection_accuracy"].status == "error"
    assert by["detection_accuracy"].error_category == "judge"


async def test_scorer_with_simulator_down(built_catalog):
    """An unreachable simulator: every simulation metric and its ceiling is a judge error state,
    the other metrics stand (lexical decider)."""
    dead = SimulatorSettings(url=f"http://127.0.0.1:{free_port()}/v1", max_retries=0)
    res = await SAEScorer().score(
        _target(), "[DESCRIPTION]: Monday", EpisodeStats(), ScoringContext(simulator_settings=dead)
    )
    sims = [r for r in res if r.metric.startswith("simulation_")]
    assert len(sims) == 4
    assert all(
        r.status == "error" and r.error_category == "judge" and r.value is None for r in sims
    )
    assert all(r.status == "ok" for r in res if not r.metric.startswith("simulation_"))


async def test_scorer_without_catalog_is_an_infrastructure_error(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    res = await SAEScorer().score(
        _target(), "[DESCRIPTION]: Monday", EpisodeStats(), ScoringContext()
    )
    assert all(r.status == "error" and r.error_category == "infrastructure" for r in res)
