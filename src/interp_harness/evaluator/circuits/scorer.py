"""Scores of a finished episode on a circuit target (docs/circuits.md, "Scores"; the formulas with
their sources in docs/evaluator.md, "Circuit scores"):

- `node_precision`, `node_recall`, `node_f1`: the [CIRCUIT] components against the compiled
  truth, within the model's non-empty components; `node_f1_random`, beside them, is the exact
  expectation of node F1 over uniformly random circuits of the size the answer claims (the floor
  of every answer, whatever agent wrote it);
- `circuit_code_exact`: the fraction of held-out inputs on which the answer's code returns the
  model's output at every position (the code runs only in the scoring sandbox);
- `cpr`, `cmd`: faithfulness of the claimed circuit after MIB (one circuit, not integrated over
  sizes), on held-out inputs with every other component mean-ablated;
- `closure`: the fraction of `K_RANDOM` random circuits of the claimed size that the claimed one
  beats on faithfulness (ties one half);
and `cpr_ceiling`, `cmd_ceiling`, `closure_ceiling`: the true circuit through the same scorer (a
check of the target: its CPR is 1 when the truth is the whole mechanism).

The scorer loads the target's weights (a trusted build artifact of the operator's cache) to
ablate it; the agent's code never runs here. An answer without a [CIRCUIT] section, or with code
past its bound, is the agent's score at each metric's worst value; weights or a truth that cannot
be read are error states (`infrastructure`, `target`), as is a failed sandbox (`sandbox`).
"""

from __future__ import annotations

import asyncio
import json
import random
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from interp_harness.evaluator.answer_bounds import too_long
from interp_harness.evaluator.circuits import faithfulness as fa
from interp_harness.evaluator.scorer import score_parts
from interp_harness.function_store.circuits.answer import (
    ParsedCircuit,
    description_of,
    parse_circuit,
)
from interp_harness.sdk import (
    CodeJob,
    CodeResult,
    EpisodeStats,
    Scorer,
    ScoreResult,
    ScoringContext,
    Target,
    parse_answer,
)

NODE = ("node_precision", "node_recall", "node_f1", "node_f1_random")
CODE = ("circuit_code_exact",)
FAITH = ("cpr", "cmd", "closure")
CEILINGS = tuple(f"{m}_ceiling" for m in FAITH)
METRICS = (*NODE, *CODE, *FAITH)

# the value an answer a metric cannot read scores (the agent's score; answer_bounds' rule)
WORST: dict[str, float | None] = {
    "node_precision": None,  # undefined: nothing readable was claimed
    "node_recall": 0.0,
    "node_f1": 0.0,
    "node_f1_random": 0.0,  # a random circuit of no components
    "circuit_code_exact": 0.0,
    "cpr": 0.0,
    "cmd": 1.0,
    "closure": 0.0,
}

N_HELD_OUT = 64  # inputs the code and the circuits are scored on
# a mean ablation replaces a component by its mean over random inputs of each input's length
# (the model's own reference draw, seeded by the target)
# random circuits of the claimed size for closure (all of them when there are no more): each is
# one ablated pass; 16 give closure in steps of 1/32 with the ties' halves
K_RANDOM = 16
ABLATION: fa.AblationKind = "mean"
CALL = "__circuit_call__"  # the sandbox's entry: the answer's function on one JSON-encoded input


@dataclass(frozen=True)
class Loaded:
    """What scoring reads about a target: its model, the truth and the input space, and what one
    episode's scoring has measured on it (`measured`: the held-out inputs and outputs per seed,
    m per circuit; the claim, the ceiling and closure's random circuits share circuits, the
    empty one always, and random ones repeat when few are possible)."""

    model: Any  # model_services.intervention.circuit_model.CircuitModel
    truth: list[str]  # the true circuit, within the model's components
    vocab: list[Any]
    max_len: int
    measured: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    def held_out(self, seed: int) -> tuple[list[list[Any]], list[list[Any]]]:
        """The held-out inputs of `seed` and the full model's outputs on them."""
        key = ("held_out", seed)
        if key not in self.measured:
            inputs = sample_inputs(self.vocab, self.max_len, N_HELD_OUT, seed)
            self.measured[key] = (inputs, self.model.run(inputs))
        return self.measured[key]

    def m(self, circuit: Sequence[str], seed: int) -> float:
        """m(C) on the held-out inputs of `seed`: the order of the circuit's names is no matter
        (everything outside it is ablated, in the model's order)."""
        key = ("m", frozenset(circuit), seed)
        if key not in self.measured:
            inputs, full = self.held_out(seed)
            self.measured[key] = fa.circuit_agreement(
                self.model, circuit, inputs, full, ABLATION, None, seed
            )
        return self.measured[key]


def load_target(target: Target) -> Loaded:
    """The target's model and truth, from the build's files the hidden spec names."""
    # torch: loaded when scoring
    from interp_harness.function_store.circuits import build
    from interp_harness.model_services.intervention.circuit_model import CircuitModel

    spec = target.hidden.spec
    m = CircuitModel.from_npz(spec["weights"])
    truth = build.load_truth(spec["truth"])
    universe = set(m.components())
    return Loaded(
        model=m,
        truth=[c for c in truth.circuit if c in universe],
        vocab=list(m.vocab),
        max_len=int(m.max_len),
    )


def sample_inputs(vocab: Sequence[Any], max_len: int, n: int, seed: int) -> list[list[Any]]:
    """`n` inputs of lengths 1..max_len, tokens drawn uniformly from `vocab` (seeded, so the
    agent's answer and the truth see the same inputs; the agent never sees the seed)."""
    rng = random.Random(seed)
    return [[rng.choice(vocab) for _ in range(rng.randint(1, max_len))] for _ in range(n)]


def _seed(target: Target) -> int:
    return zlib.crc32(target.id.encode())


def _failed(metrics: Sequence[str], reason: str, kind: str, **details: Any) -> list[ScoreResult]:
    return [
        ScoreResult(
            metric=m,
            value=WORST[m],
            details={**details, "failure": reason, "agent_failure": kind},
        )
        for m in metrics
    ]


def _error(
    metrics: Sequence[str], category: Literal["target", "infrastructure"], msg: str
) -> list[ScoreResult]:
    return [
        ScoreResult(metric=m, status="error", error_category=category, error=msg) for m in metrics
    ]


def node_results(
    claimed: ParsedCircuit, truth: Sequence[str], universe: Sequence[str]
) -> list[ScoreResult]:
    """Node P/R/F1 and the random floor of the claimed size. Details hold counts only: the
    names of missed components would tell the truth to anyone reading the scores."""
    inside = [c for c in claimed.components if c in set(universe)]
    s = fa.node_scores(inside, truth, universe)
    d: dict[str, Any] = {
        "claimed": len(inside),
        "outside_universe": len(claimed.components) - len(inside),
        "universe": len(universe),
        "tp": s.tp,
        "fp": s.fp,
        "fn": s.fn,
    }
    prec = ScoreResult(metric="node_precision", value=s.precision, details=dict(d))
    if s.precision is None:
        prec.details["undefined"] = "no component claimed: precision is 0/0"
    return [
        prec,
        ScoreResult(metric="node_recall", value=s.recall, details=dict(d)),
        ScoreResult(metric="node_f1", value=s.f1, details=dict(d)),
        ScoreResult(
            metric="node_f1_random",
            value=fa.random_f1(len(inside), len(truth), len(universe)),
            details={**d, "how": "exact expectation over uniform circuits of the claimed size"},
        ),
    ]


@dataclass(frozen=True)
class CircuitFaith:
    faith: fa.Faithfulness
    closure: float
    randoms: int


def measure(loaded: Loaded, circuit: Sequence[str], seed: int) -> CircuitFaith:
    """CPR, CMD and closure of one circuit on the target's held-out inputs."""
    universe = loaded.model.components()
    m_c, m_e = loaded.m(circuit, seed), loaded.m((), seed)
    randoms = fa.random_circuits(universe, len(circuit), K_RANDOM, seed + 2)
    m_r = [loaded.m(sorted(r), seed) for r in randoms]
    return CircuitFaith(fa.faithfulness(m_c, m_e, 1.0), fa.closure(m_c, m_r), len(randoms))


def faith_results(cf: CircuitFaith, suffix: str = "") -> list[ScoreResult]:
    f = cf.faith
    d = {
        "m_circuit": f.m_circuit,
        "m_empty": f.m_empty,
        "m_full": f.m_full,
        "faithfulness": f.f,
        "ablation": ABLATION,
        "held_out": N_HELD_OUT,
        "random_circuits": cf.randoms,
    }
    cmd = (
        ScoreResult(metric="cmd" + suffix, value=f.cmd, details=d)
        if f.cmd is not None
        else ScoreResult(
            metric="cmd" + suffix,
            status="error",
            error_category="target",
            error="every component ablated leaves the outputs as they are: f is 0/0",
            details=d,
        )
    )
    return [
        ScoreResult(metric="cpr" + suffix, value=f.cpr, details=d),
        cmd,
        ScoreResult(metric="closure" + suffix, value=cf.closure, details=d),
    ]


def code_job(code: str, func_name: str, inputs: Sequence[Sequence[Any]]) -> CodeJob:
    """The answer's code, with an entry that decodes one JSON input, calls the answer's function
    and encodes its list of outputs (numpy scalars as Python numbers) as JSON text."""
    entry = (
        f"\n\ndef {CALL}(text):\n"
        "    import json as _json\n"
        f"    out = {func_name}(_json.loads(text))\n"
        "    return _json.dumps([v.item() if hasattr(v, 'item') else v for v in out], default=str)\n"
    )
    return CodeJob(
        id="circuit",
        code=code + entry,
        func_name=CALL,
        kind="text",
        inputs=[json.dumps(list(x)) for x in inputs],
    )


def exact_matches(result: CodeResult, full: Sequence[Sequence[Any]]) -> list[bool]:
    """Per input: the code's outputs equal the model's at every position."""
    out = []
    for i, expected in enumerate(full):
        got = result.value(i)
        try:
            seq = json.loads(got) if isinstance(got, str) else None
        except ValueError:
            seq = None
        out.append(
            isinstance(seq, list)
            and len(seq) == len(expected)
            and all(fa.same_output(a, b) for a, b in zip(seq, expected, strict=True))
        )
    return out


def code_result(
    result: CodeResult, full: Sequence[Sequence[Any]], details: dict[str, Any]
) -> ScoreResult:
    if result.status == "infrastructure":
        return ScoreResult(
            metric="circuit_code_exact",
            status="error",
            error_category="sandbox",
            error=f"sandbox: {result.reason}",
            details=details,
        )
    if result.status == "error" and not result.results:
        return _failed(CODE, result.reason or "the code did not run", "unparsable", **details)[0]
    hits = exact_matches(result, full)
    d = {**details, "matched": sum(hits), "held_out": len(full)}
    if result.reason:
        d["failure"] = result.reason
    return ScoreResult(metric="circuit_code_exact", value=sum(hits) / len(full), details=d)


async def score_code(
    loaded: Loaded, code: str, func_name: str | None, seed: int, ctx: ScoringContext
) -> list[ScoreResult]:
    d: dict[str, Any] = {"func_name": func_name, "code_chars": len(code)}
    if not code.strip() or not func_name:
        return _failed(CODE, "no function in [CODE]", "unparsable", **d)
    if why := too_long(code, "code", "code"):
        return _failed(CODE, why.reason, why.kind, **d)
    inputs, full = await asyncio.to_thread(loaded.held_out, seed)
    (result,) = await asyncio.to_thread(ctx.run_code, [code_job(code, func_name, inputs)])
    d.update(printed_bytes=result.printed_bytes, guard=result.guard)
    return [code_result(result, full, d)]


async def score_circuit_episode(
    target: Target, final_answer: str, ctx: ScoringContext
) -> list[ScoreResult]:
    parsed = parse_answer(final_answer, ctx.settings.parser)
    claimed = parse_circuit(final_answer)
    seed = _seed(target)
    try:
        loaded = await asyncio.to_thread(load_target, target)
    except (KeyError, TypeError, ValueError) as e:  # the hidden spec or truth is malformed
        # (pydantic's ValidationError is a ValueError)
        return _error([*METRICS, *CEILINGS], "target", f"{type(e).__name__}: {e}")
    except Exception as e:  # weights missing or unreadable: the operator's cache, not the agent
        return _error([*METRICS, *CEILINGS], "infrastructure", f"{type(e).__name__}: {e}")
    universe = loaded.model.components()
    out: list[ScoreResult] = []
    d = {"parser": parsed.parser, "description_chars": len(description_of(parsed.description))}
    if not claimed.found:
        out += _failed(
            [*NODE, *FAITH], "no [CIRCUIT] section in the final answer", "unparsable", **d
        )
    else:
        out += node_results(claimed, loaded.truth, universe)
        inside = [c for c in claimed.components if c in set(universe)]
        out += faith_results(await asyncio.to_thread(measure, loaded, inside, seed))
    out += await score_code(loaded, parsed.code, parsed.func_name, seed, ctx)
    key = (target.id, str(target.hidden.spec.get("weights")))
    if key not in _CEILINGS:  # the truth's measure is the same for every answer: once a target
        _CEILINGS[key] = await asyncio.to_thread(measure, loaded, loaded.truth, seed)
    out += faith_results(_CEILINGS[key], "_ceiling")
    return out


_CEILINGS: dict[tuple[str, str], CircuitFaith] = {}


class CircuitScorer(Scorer):
    """Circuit targets: node P/R/F1 with the random floor of the claimed size, the code's exact
    match, MIB's CPR and CMD for the claimed circuit, closure; ceilings from the true circuit."""

    metrics = (*METRICS, *CEILINGS)

    async def score(
        self, target: Target, final_answer: str, stats: EpisodeStats, ctx: ScoringContext
    ) -> list[ScoreResult]:
        return await score_parts(
            [lambda: score_circuit_episode(target, final_answer or "", ctx)], stats
        )
