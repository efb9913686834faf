"""The circuits family's scores as pure functions of sets and outputs (docs/circuits.md, "Scores";
formulas and sources in docs/evaluator.md, "Circuit scores").

- node precision / recall / F1 of a claimed component set against the compiled truth, within the
  scoring universe (the model's non-empty components);
- the exact expectation of node F1 over uniformly random circuits of the claimed size (the floor
  printed beside every answer);
- faithfulness of one circuit after MIB (Mueller et al. 2025): m(X) is the fraction of held-out
  output positions at which model X's decoded output equals the full model's; with everything
  outside the circuit C ablated, CPR = m(C) / m(N), faithfulness f = (m(C) - m(∅)) / (m(N) -
  m(∅)) and CMD = |1 - f| clipped to [0, 1];
- closure: the fraction of random circuits of the claimed size whose m the claimed one beats
  (ties count one half).
The model is anything with `components()`, `run(inputs)` and `ablate(inputs, components, kind=,
reference=, seed=)` returning decoded outputs per position (the target's `CircuitModel`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal, Protocol

AblationKind = Literal["zero", "mean", "resample"]

# how close two numeric outputs must be to count as the same output: tracr's numerical MLPs
# approximate their function, so the full model's value carries small errors
NUMERIC_TOL = 1e-3


class AblatableModel(Protocol):
    def components(self) -> list[str]: ...

    def run(self, inputs: Sequence[Sequence[Any]]) -> list[list[Any]]: ...

    def ablate(
        self,
        inputs: Sequence[Sequence[Any]],
        components: Collection[str],
        kind: AblationKind = "mean",
        reference: Sequence[Sequence[Any]] | None = None,
        seed: int = 0,
    ) -> list[list[Any]]: ...


@dataclass(frozen=True)
class NodeScores:
    precision: float | None  # None: no component claimed (undefined, never a 0 or a 1)
    recall: float
    f1: float
    tp: int
    fp: int
    fn: int


def node_scores(
    claimed: Iterable[str], truth: Iterable[str], universe: Iterable[str]
) -> NodeScores:
    """P/R/F1 of `claimed` against `truth`, both cut to `universe` (padding and unknown names
    belong to neither). Empty claim: precision undefined, recall 0 and F1 0 (F1's limit as the
    claim shrinks to nothing is 0 whatever the truth)."""
    u = set(universe)
    c, t = set(claimed) & u, set(truth) & u
    tp, fp, fn = len(c & t), len(c - t), len(t - c)
    precision = tp / len(c) if c else None
    recall = tp / len(t) if t else 0.0
    f1 = 2 * tp / (len(c) + len(t)) if c or t else 0.0
    return NodeScores(precision, recall, f1, tp, fp, fn)


def random_f1(k: int, t: int, n: int) -> float:
    """E[node F1] of a circuit of `k` components drawn uniformly from `n`, `t` of which are true:
    F1 = 2 TP / (k + t) with k and t fixed, and E[TP] = k t / n (hypergeometric mean)."""
    if not 0 <= k <= n or not 0 <= t <= n:
        raise ValueError(f"sizes out of range: k={k}, t={t}, n={n}")
    if k + t == 0:
        return 0.0
    return 2 * (k * t / n) / (k + t)


def same_output(a: Any, b: Any) -> bool:
    """Two decoded outputs at one position are the same: equal, or both numbers within
    NUMERIC_TOL (absolute, or relative for large values)."""
    if isinstance(a, bool) or isinstance(b, bool):  # True == 1 in Python; not as outputs
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        if math.isnan(a) or math.isnan(b):
            return False
        return math.isclose(a, b, rel_tol=NUMERIC_TOL, abs_tol=NUMERIC_TOL)
    return bool(a == b)


def agreement(outputs: Sequence[Sequence[Any]], reference: Sequence[Sequence[Any]]) -> float:
    """The fraction of the reference's output positions where `outputs` has the same output (a
    missing position disagrees)."""
    total = sum(len(r) for r in reference)
    if total == 0:
        raise ValueError("the reference has no output positions")
    hits = sum(
        same_output(o[i], r[i])
        for o, r in zip(outputs, reference, strict=True)
        for i in range(len(r))
        if i < len(o)
    )
    return hits / total


@dataclass(frozen=True)
class Faithfulness:
    m_circuit: float  # m(C): the circuit alone (everything else ablated)
    m_empty: float  # m(∅): every component ablated
    m_full: float  # m(N): the full model (1 by construction: it agrees with itself)
    cpr: float  # m(C) / m(N)
    f: float | None  # MIB's normalised faithfulness; None when m(N) = m(∅)
    cmd: float | None  # |1 - f| clipped to [0, 1]; None when f is undefined


def faithfulness(m_circuit: float, m_empty: float, m_full: float = 1.0) -> Faithfulness:
    """CPR, f and CMD of one circuit from its three m values. f is undefined when ablating
    everything already leaves the model's outputs as they are (m(∅) = m(N)): the target cannot
    tell a circuit from none."""
    if m_full <= 0:
        raise ValueError("m(N) must be positive")
    cpr = m_circuit / m_full
    span = m_full - m_empty
    if abs(span) < 1e-12:
        return Faithfulness(m_circuit, m_empty, m_full, cpr, None, None)
    f = (m_circuit - m_empty) / span
    return Faithfulness(m_circuit, m_empty, m_full, cpr, f, min(1.0, abs(1.0 - f)))


def closure(m_claimed: float, m_random: Sequence[float]) -> float:
    """The fraction of random circuits the claimed one beats on m, ties counting one half (so a
    claim indistinguishable from random scores 0.5, whatever the size)."""
    if not m_random:
        raise ValueError("no random circuits")
    wins = sum(1.0 if m_claimed > r else 0.5 if m_claimed == r else 0.0 for r in m_random)
    return wins / len(m_random)


def random_circuits(universe: Sequence[str], k: int, count: int, seed: int) -> list[frozenset[str]]:
    """`count` circuits of `k` components drawn uniformly (with replacement) from `universe`;
    every one of them, once each, when there are no more than `count` (then closure is exact)."""
    names = sorted(universe)
    if not 0 <= k <= len(names):
        raise ValueError(f"a circuit of {k} components from {len(names)}")
    if math.comb(len(names), k) <= count:
        return [frozenset(c) for c in combinations(names, k)]
    rng = random.Random(seed)
    return [frozenset(rng.sample(names, k)) for _ in range(count)]


def circuit_agreement(
    model: AblatableModel,
    circuit: Collection[str],
    inputs: Sequence[Sequence[Any]],
    full: Sequence[Sequence[Any]],
    kind: AblationKind,
    reference: Sequence[Sequence[Any]] | None,
    seed: int,
) -> float:
    """m(C): agreement with the full model's outputs `full` when every component of the model
    outside `circuit` is ablated."""
    outside = [c for c in model.components() if c not in set(circuit)]
    if not outside:
        out = model.run(inputs)
    else:
        out = model.ablate(inputs, outside, kind=kind, reference=reference, seed=seed)
    return agreement(out, full)
