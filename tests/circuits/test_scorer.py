"""CircuitScorer on a real target: tracr's `make_reverse` compiled and merged with `make_hist` as
its distractor, served weights and truth written as the build writes them, and the agent's code
run in the real scoring sandbox. Each expected value is worked out here from the model's own
runs and by counting, never read from the scorer's internals."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from interp_harness.evaluator.api import EpisodeStats
from interp_harness.evaluator.circuits import scorer as sc
from interp_harness.evaluator.scorer import ScoringContext
from interp_harness.function_store.circuits.build import CircuitTruth
from interp_harness.function_store.models import HiddenTruth, PublicMeta, Target
from interp_harness.harness.sandbox.code_runner import run_in_sandbox
from interp_harness.model_services.intervention.circuit_model import CircuitModel
from interp_harness.model_services.intervention.compiled import save_npz

VOCAB = ["a", "b", "c"]
MAX_LEN = 4


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from tracr.compiler import lib
    from tracr.rasp import rasp

    from interp_harness.function_store.circuits.compile import compile_program
    from interp_harness.function_store.circuits.merge import merge

    asked = compile_program(lib.make_reverse(rasp.tokens), VOCAB, MAX_LEN)
    distractor = compile_program(lib.make_hist(), VOCAB, MAX_LEN)
    merged = merge([asked, distractor], seed=3)
    root = tmp_path_factory.mktemp("circuits-scoring")
    save_npz(root / "model.npz", merged.arrays, merged.meta)
    circuit = sorted(c for c, p in merged.owner.items() if p == 0)
    truth = CircuitTruth(
        id="circuits-test/reverse/0",
        dataset="circuits-test",
        digest="-",
        circuit=circuit,
        components=sorted(merged.owner),
        program="reverse",
        vocab=VOCAB,
        max_len=MAX_LEN,
        output_kind=merged.meta.output_kind,
        output_values=merged.meta.output_values,
        n_layers=merged.meta.n_layers,
        n_heads=merged.meta.n_heads,
        roles=merged.roles,
        distractors=["hist"],
        owner=merged.owner,
        ops=["reverse"],
        seed=3,
        seconds=0.0,
    )
    (root / "truth.json").write_text(truth.model_dump_json())
    target = Target(
        id="circuits-test/reverse/0",
        dataset="circuits-test",
        family="circuits",
        variant="reverse",
        public=PublicMeta(input_kind="text", prompt_family="circuits"),
        hidden=HiddenTruth(
            runner="circuits",
            spec={"weights": str(root / "model.npz"), "truth": str(root / "truth.json")},
            description="reverse",
        ),
    )
    model = CircuitModel.from_npz(root / "model.npz")
    return {
        "target": target,
        "model": model,
        "truth": circuit,
        "distractor": sorted(c for c, p in merged.owner.items() if p == 1),
    }


def score(built: dict[str, Any], answer: str) -> dict[str, Any]:
    ctx = ScoringContext(code_runner=run_in_sandbox)
    out = asyncio.run(sc.CircuitScorer().score(built["target"], answer, EpisodeStats(), ctx))
    return {r.metric: r for r in out}


REVERSE = "def f(tokens):\n    return list(tokens)[::-1]\n"


def circuit_answer(components: list[str], code: str = REVERSE) -> str:
    lines = "\n".join(f"{c}: part of it" for c in components) or "none"
    return f"[CIRCUIT]\n{lines}\n[DESCRIPTION]: reverses.\n[CODE]:\n```python\n{code}```\n"


def held_out(built: dict[str, Any]) -> list[list[Any]]:
    return sc.sample_inputs(VOCAB, MAX_LEN, sc.N_HELD_OUT, sc._seed(built["target"]))


def m_of(built: dict[str, Any], keep: list[str]) -> float:
    """m(C) counted here: positions where the model with everything outside `keep` mean-ablated
    gives the full model's output."""
    model, inputs = built["model"], held_out(built)
    full = model.run(inputs)
    outside = [c for c in model.components() if c not in keep]
    out = model.ablate(inputs, outside, kind="mean", seed=sc._seed(built["target"]))
    hits = sum(a == b for o, f in zip(out, full, strict=True) for a, b in zip(o, f, strict=True))
    return hits / sum(len(f) for f in full)


def test_the_true_circuit_scores_one(built: dict[str, Any]) -> None:
    s = score(built, circuit_answer(built["truth"]))
    assert s["node_precision"].value == 1.0
    assert s["node_recall"].value == 1.0
    assert s["node_f1"].value == 1.0
    assert s["cpr"].value == 1.0
    assert s["cmd"].value == 0.0
    assert s["cpr_ceiling"].value == 1.0
    assert s["circuit_code_exact"].value == 1.0
    # no score names a component: the truth stays out of what viewers of scores read
    assert all(c not in json.dumps(r.details) for r in s.values() for c in built["truth"])


def test_the_empty_circuit(built: dict[str, Any]) -> None:
    s = score(built, circuit_answer([]))
    assert s["node_precision"].value is None and "undefined" in s["node_precision"].details
    assert (s["node_recall"].value, s["node_f1"].value, s["node_f1_random"].value) == (0, 0, 0)
    m_empty = m_of(built, [])
    assert m_empty < 1  # reversing is not done by the embeddings alone
    assert s["cpr"].value == pytest.approx(m_empty)
    assert s["cmd"].value == 1.0  # f = (m(∅) - m(∅)) / (1 - m(∅)) = 0
    assert s["closure"].value == 0.5  # the one circuit of size 0 ties with itself


def test_a_distractors_circuit(built: dict[str, Any]) -> None:
    d, t = built["distractor"], built["truth"]
    n = len(built["model"].components())
    s = score(built, circuit_answer(d))
    assert (s["node_precision"].value, s["node_recall"].value, s["node_f1"].value) == (0, 0, 0)
    # E[TP] = k t / n; F1 = 2 E[TP] / (k + t)
    assert s["node_f1_random"].value == pytest.approx(2 * len(d) * len(t) / n / (len(d) + len(t)))
    # the distractor writes only its own residual space: keeping it is keeping nothing
    m_empty = m_of(built, [])
    assert s["cpr"].value == pytest.approx(m_empty)
    assert s["cmd"].value == 1.0
    assert 0.0 <= s["closure"].value <= 1.0


def test_the_whole_model_as_a_circuit(built: dict[str, Any]) -> None:
    universe = built["model"].components()
    s = score(built, circuit_answer(universe))
    assert s["node_precision"].value == pytest.approx(len(built["truth"]) / len(universe))
    assert s["node_recall"].value == 1.0
    assert s["cpr"].value == 1.0 and s["cmd"].value == 0.0
    # the one circuit of its size is itself: no better than chance
    assert s["closure"].value == 0.5
    assert s["node_f1_random"].value == pytest.approx(s["node_f1"].value)


def test_a_random_circuit_and_wrong_code(built: dict[str, Any]) -> None:
    universe = built["model"].components()
    claim = [universe[0], universe[-1]]  # neither all true nor all false for this merge
    truth = set(built["truth"])
    tp = len(set(claim) & truth)
    s = score(
        built, circuit_answer([*claim, "L9H9"], code="def f(tokens):\n    return list(tokens)\n")
    )
    assert s["node_precision"].value == pytest.approx(tp / 2)
    assert s["node_recall"].value == pytest.approx(tp / len(truth))
    assert s["node_f1"].value == pytest.approx(2 * tp / (2 + len(truth)))
    assert s["node_precision"].details["outside_universe"] == 1
    assert s["cpr"].value == pytest.approx(m_of(built, claim))
    # the identity matches reverse exactly on palindromes
    inputs = held_out(built)
    palindromes = sum(x == x[::-1] for x in inputs)
    assert s["circuit_code_exact"].value == pytest.approx(palindromes / len(inputs))


def test_unreadable_answers_are_the_agents_score(built: dict[str, Any]) -> None:
    s = score(built, "[DESCRIPTION]: it reverses, but no circuit and no code")
    for m in ("node_recall", "node_f1", "cpr", "closure", "circuit_code_exact"):
        assert s[m].status == "ok" and s[m].value == 0.0, m
        assert s[m].details["agent_failure"] == "unparsable"
    assert s["cmd"].value == 1.0
    assert s["cpr_ceiling"].value == 1.0  # the truth is measured as for any answer


def test_missing_weights_are_an_error_state(built: dict[str, Any], tmp_path: Path) -> None:
    t = built["target"].model_copy(deep=True)
    t.hidden.spec["weights"] = str(tmp_path / "gone.npz")
    out = asyncio.run(
        sc.CircuitScorer().score(
            t, circuit_answer(built["truth"]), EpisodeStats(), ScoringContext()
        )
    )
    assert out and all(r.status == "error" and r.error_category == "infrastructure" for r in out)
