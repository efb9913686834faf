"""Two or more runs compared on the targets they share (`harness compare RUN RUN...`, the compare
page): for every report row of their families, each pair of runs gets a paired test over the
targets both scored (interp_harness.evaluator.paired: McNemar for the report's pass/fail rows,
the paired bootstrap of the mean difference for the others), the inputs each used on those
targets, each run's floor on the same targets (the floor run matched to the run's input budget:
docs/orchestrator.md, "Floor runs") and the metric's chance level.

A target counts once per run: its epochs are reduced as the report reduces them. Errors are
left out on both sides (a target one side did not score is not paired), and counted."""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations
from statistics import mean

from pydantic import BaseModel, Field
from rich.console import Group
from rich.markup import escape
from rich.table import Table

from interp_harness.evaluator.api import EpisodeSummary
from interp_harness.evaluator.metric_scale import scale_of
from interp_harness.evaluator.paired import McNemar, PairedDifference, mcnemar, paired_bootstrap
from interp_harness.evaluator.report import EpochReducer, per_target, report_rows


class RunSide(BaseModel):
    """One run of the comparison, with its floor run (its floor agent on the same targets)."""

    run_id: str
    agent: str
    config: str = ""
    episodes: list[EpisodeSummary] = Field(default_factory=list, exclude=True)
    floor: list[EpisodeSummary] = Field(default_factory=list, exclude=True)
    floor_run_id: str | None = None
    floor_agent: str | None = None
    floor_config: str | None = None  # e.g. `options {"max_inputs": 64}`: the budget it was given
    reducer: EpochReducer = "mean"


class PairRow(BaseModel):
    a: str  # run ids
    b: str
    family: str
    metric: str
    label: str
    test: str  # "mcnemar" | "paired bootstrap"
    shared: int  # targets both runs have
    n: int  # targets both runs scored (the pairs)
    a_mean: float | None = None
    b_mean: float | None = None
    difference: PairedDifference
    mcnemar: McNemar | None = None
    a_inputs: float | None = None  # mean inputs on the n targets
    b_inputs: float | None = None
    a_floor: float | None = None  # the floor run's mean on those of the n targets it scored
    b_floor: float | None = None
    a_floor_inputs: float | None = None
    b_floor_inputs: float | None = None
    chance: float | None = None  # what a constant answer scores (metric_scale), when fixed


class Comparison(BaseModel):
    sides: list[RunSide]
    rows: list[PairRow] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


def _per_target(
    eps: list[EpisodeSummary], metric: str, method: str, reducer: EpochReducer
) -> dict[str, tuple[float, float]]:
    """target -> (its score reduced over its scored epochs, its mean inputs over them)."""
    scored: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for e in eps:
        s = next((s for s in e.scores if s.metric == metric), None)
        if s is not None and s.status == "ok" and s.value is not None:
            scored[e.target_id].append((s.value, e.stats.inputs))
    out = {}
    for t, vs in scored.items():
        (value,), _ = per_target([(t, v) for v, _ in vs], reducer, method)
        out[t] = (value, mean(n for _, n in vs))
    return out


def _mean_on(values: dict[str, tuple[float, float]], targets: list[str], i: int) -> float | None:
    got = [values[t][i] for t in targets if t in values]
    return mean(got) if got else None


def _pair(a: RunSide, b: RunSide, label: str, family: str, metric: str, method: str) -> PairRow:
    ea = [e for e in a.episodes if e.family == family]
    eb = [e for e in b.episodes if e.family == family]
    va = _per_target(ea, metric, method, a.reducer)
    vb = _per_target(eb, metric, method, b.reducer)
    shared = {e.target_id for e in ea} & {e.target_id for e in eb}
    paired = sorted(t for t in shared if t in va and t in vb)
    xa, xb = [va[t][0] for t in paired], [vb[t][0] for t in paired]
    # a pass/fail row whose reduced epochs stay 0/1 takes McNemar; anything else the bootstrap
    binary = method == "wilson" and all(v in (0.0, 1.0) for v in xa + xb)
    fa = _per_target([e for e in a.floor if e.family == family], metric, method, "mean")
    fb = _per_target([e for e in b.floor if e.family == family], metric, method, "mean")
    scale = scale_of(metric)
    return PairRow(
        a=a.run_id,
        b=b.run_id,
        family=family,
        metric=metric,
        label=label,
        test="mcnemar" if binary else "paired bootstrap",
        shared=len(shared),
        n=len(paired),
        a_mean=mean(xa) if xa else None,
        b_mean=mean(xb) if xb else None,
        difference=paired_bootstrap(xa, xb),
        mcnemar=mcnemar(xa, xb) if binary and paired else None,
        a_inputs=_mean_on(va, paired, 1),
        b_inputs=_mean_on(vb, paired, 1),
        a_floor=_mean_on(fa, paired, 0),
        b_floor=_mean_on(fb, paired, 0),
        a_floor_inputs=_mean_on(fa, paired, 1),
        b_floor_inputs=_mean_on(fb, paired, 1),
        chance=scale.trivial if scale else None,
    )


def compare_runs(sides: list[RunSide]) -> Comparison:
    """Every pair of `sides` (in order: the first against each later one, and so on) on every
    report row of the families both ran."""
    comp = Comparison(sides=sides)
    for a, b in combinations(sides, 2):
        families = {e.family for e in a.episodes} & {e.family for e in b.episodes}
        for label, family, metric, method, _ in report_rows():
            if family in families:
                row = _pair(a, b, label, family, metric, method)
                if row.n:
                    comp.rows.append(row)
        if not families:
            comp.notes.append(f"runs {a.run_id} and {b.run_id} share no family: nothing to pair")
    for s in sides:
        if s.floor_run_id is None:
            comp.notes.append(f"run {s.run_id} has no floor run: no floor beside its scores")
    comp.notes.append(
        "pairs: targets both runs scored (errors on either side left out); a target's epochs "
        "reduced first. McNemar: exact two-sided test of the discordant pass/fail pairs; "
        "B-A: mean difference with its 95% paired-bootstrap interval (targets resampled)"
    )
    return comp


def _f(v: float | None, nd: int = 2) -> str:
    return "-" if v is None else f"{v:.{nd}f}"


def render_comparison(comp: Comparison) -> Group:
    """One table per pair of runs: the rows' paired statistics, inputs and floors."""
    sides = {s.run_id: s for s in comp.sides}
    parts: list[Table | str] = []
    for s in comp.sides:
        floor = (
            f"; floor {s.floor_agent} (run {s.floor_run_id}, {s.floor_config})"
            if s.floor_run_id
            else ""
        )
        parts.append(escape(f"run {s.run_id}: {s.agent} · {s.config}{floor}"))
    pairs = list(dict.fromkeys((r.a, r.b) for r in comp.rows))
    for a, b in pairs:
        t = Table(title=escape(f"A = {a} ({sides[a].agent})  vs  B = {b} ({sides[b].agent})"))
        for col in ("row", "n", "A", "B", "B-A [95% CI]", "McNemar", "inputs A/B", "floor A/B"):
            t.add_column(col, justify="left" if col == "row" else "right")
        for r in (r for r in comp.rows if (r.a, r.b) == (a, b)):
            d = r.difference
            ci = f" [{_f(d.ci_low)}, {_f(d.ci_high)}]" if d.ci_low is not None else ""
            m = r.mcnemar
            test = f"{m.a_only}/{m.b_only} p={m.p_value:.3f}" if m else "-"
            chance = f" (chance {r.chance:.2f})" if r.chance is not None else ""
            t.add_row(
                escape(r.label) + chance,
                f"{r.n}/{r.shared}",
                _f(r.a_mean),
                _f(r.b_mean),
                f"{d.diff:+.2f}{ci}",
                test,
                f"{_f(r.a_inputs, 0)}/{_f(r.b_inputs, 0)}",
                f"{_f(r.a_floor)}/{_f(r.b_floor)}"
                + (
                    f" @{_f(r.a_floor_inputs, 0)}/{_f(r.b_floor_inputs, 0)}"
                    if r.a_floor is not None or r.b_floor is not None
                    else ""
                ),
            )
        parts.append(t)
    if not pairs:
        parts.append("no target scored by both runs")
    parts += [f"- {escape(n)}" for n in comp.notes]
    parts.append(
        "- n: targets paired / targets both runs have; McNemar a/b: targets only A passed / only "
        "B passed, and the test's p; floor A/B @inputs: each run's floor on the paired targets, "
        "at the inputs it used"
    )
    return Group(*parts)
