"""Run reports in the layout of FIND's Table 2, with counts, errors and 95% confidence intervals.

Rows come from the benchmark registry (each family's `report_rows`, in family order): per agent
and exemplar setting (with / without exemplar initialisation), FIND's Table 2 rows first, then the
secondary rows. Intervals: Wilson score interval for rates of 0/1 outcomes (a row's
`interval="wilson"`); Student-t interval of the mean for per-function means (code exact match,
unit tests, IoU). Episodes in an error state, or whose score for the row is an error, are counted
under `errors` by category and left out of the mean (never counted as 0).

Description rows (unit tests) show the judge ceiling (the ground-truth descriptions through the
same judge, with a Wilson interval over its pooled triplets) next to chance, 1/3 for FIND's 3-way
unit tests. A judge whose ceiling is within NEAR_CHANCE_MARGIN of chance, or whose interval
includes chance, cannot tell a right description from a wrong one: those rows are marked as
carrying no information instead of being shown as results. Rows whose judge was not configured
say so and how to configure one.

A family with floor agents (`Benchmark.floors`, e.g. `interpolation`: see
benchmarks/interpolation_floor.py) has the floor's rows beside the agent's, and a run without the
floor says so in a note; one whose headline is a 0/1 success also gets a score-versus-queries
table of it (success by number of inputs the agent used) for each agent, floors included, because
a code metric can be won by sampling densely.

Repeated samples (a run's epochs, `EpisodeSummary.epoch`): a row first reduces each target's
scored epochs with the run's reducer (mean, max, at-least-one, as Inspect's reducers), then
averages over targets, so n and the intervals count targets; errored epochs are left out of the
reduction and counted under errors; `epoch_var` is the mean over targets of the across-epoch
sample variance. Summaries that are all epoch 0 report exactly as without epochs. The same
reduction comes first wherever a run's scores are summarised (`per_target`: the score-versus-
queries rows, where a target sits in the bin of its epochs' mean inputs; the runs list, a run's
metric summaries, the compare page's pairs), so n counts targets everywhere.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from statistics import mean, stdev, variance
from typing import Literal

from pydantic import BaseModel, Field
from rich import box
from rich.console import ConsoleOptions, Group, RenderResult
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Column, Table
from rich.text import Text

from interp_harness.evaluator.api import EpisodeSummary
from interp_harness.evaluator.errors import ErrorGroup, group_errors
from interp_harness.evaluator.metric_scale import DESCRIPTIVE, Scale, scale_of
from interp_harness.function_store.benchmark import Benchmark, benchmarks

Z95 = 1.959963984540054

# (row label, family, metric, interval method, is a Table 2 row)
Row = tuple[str, str, str, str, bool]
# Inspect's epoch reducers: how a target's repeated samples (epochs) become one score
EpochReducer = Literal["mean", "max", "at_least_one"]


def report_rows(records: list[Benchmark] | None = None) -> list[Row]:
    """The registry's rows: Table 2 rows first, then the secondary ones, each in family order."""
    rows = [
        (r.label, b.family, r.metric, r.interval, r.table2)
        for b in (benchmarks() if records is None else records)
        for r in b.report_rows
    ]
    return [r for r in rows if r[4]] + [r for r in rows if not r[4]]


CEILING = {"unit_test": "unit_test_ceiling", "unit_test_strict": "unit_test_ceiling_strict"}


def ceiling_metric(metric: str) -> str:
    """The score that holds a row's ceiling: FIND's judge ceilings above, else by convention
    `<metric>_ceiling` (a family's reference answer scored by the same scorer)."""
    return CEILING.get(metric, f"{metric}_ceiling")


CHANCE = 1 / 3  # FIND's unit tests: pick 1 of 3 examples
# Why 0.15: a description scores at most about the judge's ceiling, so with a ceiling below
# chance + 0.15 the whole range from a useless to a perfect description spans < 0.15, which is
# about the 95% half-width of a unit-test mean over 10 functions (a function's 10 triplets give
# 0.0-1.0 in steps of 0.1): agents could not be ranked. The interval test catches small samples
# whose ceiling looks higher by luck.
NEAR_CHANCE_MARGIN = 0.15
QUERY_BINS: list[tuple[str, int, float]] = [
    ("0", 0, 0),  # an answer scored without calling the target
    ("1-16", 1, 16),
    ("17-64", 17, 64),
    ("65-256", 65, 256),
    ("257-1024", 257, 1024),
    (">1024", 1025, math.inf),
]


class ReportRow(BaseModel):
    agent: str
    category: str
    family: str
    metric: str
    exemplar_init: bool
    table2: bool
    episodes: int
    scored: int
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    ci_method: str
    errors: dict[str, int] = Field(default_factory=dict)
    judge_ceiling: float | None = None  # the GT descriptions through the same judge
    ceiling_ci_low: float | None = None  # Wilson, over the ceiling's pooled triplets
    ceiling_ci_high: float | None = None
    chance: float | None = None  # for unit-test rows: 1/3
    # unit-test rows: ok | near_chance (no information) | no_ceiling | not_configured
    judge_status: str | None = None
    judge_note: str | None = None
    mean_target_calls: float | None = None
    mean_inputs: float | None = None
    extra: dict[str, int] = Field(default_factory=dict)  # e.g. domain outcomes
    # what predicted the scores, when their details name it (`details.simulator`: "lexical",
    # or a model): shown with the row's label
    simulator: str | None = None
    # repeated samples: `episodes` and `scored` count targets, `errors` errored epochs
    epochs: int = 1
    epoch_var: float | None = None  # mean over targets of the across-epoch sample variance
    # the run the row's episodes belong to (each run has rows of its own), its protocol mode and
    # options, and for a floor run the run it is the floor of
    run_id: str = ""
    config: str = ""
    floor_of: str | None = None
    # what a trivial answer scores on the same targets, and where that number comes from:
    # "floor <agent>" (the floor run's mean), "vacuous" (the vacuous explanation's score), "chance"
    baseline: float | None = None
    baseline_source: str | None = None
    # the row's ceiling is within NEAR_CHANCE_MARGIN of its baseline: its scores cannot tell a
    # right answer from a trivial one
    no_information: bool = False
    # rows of the same agent and family whose every episode scored the same (accuracy, balanced
    # accuracy and AUC of a balanced test set): shown once, under the first row's label
    same_as: list[str] = Field(default_factory=list)
    merged_into: str | None = None


class QueryRow(BaseModel):
    agent: str
    bin: str
    run_id: str = ""
    config: str = ""
    family: str = ""
    metric: str = ""  # the family's headline metric (a 0/1 success)
    # repeated samples: `episodes` and `scored` count targets (each in the bin of its epochs'
    # mean inputs, its scored epochs reduced first), as a ReportRow's do
    episodes: int
    scored: int | None = None
    success: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    ci_method: str = "wilson"  # "t" when reduced epochs give per-target rates, not outcomes
    mean_inputs: float | None = None
    mean_target_calls: float | None = None
    epochs: int = 1


class Report(BaseModel):
    rows: list[ReportRow] = Field(default_factory=list)
    queries: list[QueryRow] = Field(default_factory=list)
    episodes: int = 0
    unbinned: int = 0  # units of the score-versus-queries table without a score (in no bin)
    notes: list[str] = Field(default_factory=list)
    errors: list[ErrorGroup] = Field(default_factory=list)


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of `k` successes in `n`; it contains k / n (rounding alone put
    the low end of 0 successes at 5.6e-17, above the estimate: a negative error bar)."""
    if n == 0:
        return None
    p = k / n
    den = 1 + z * z / n
    center = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return min(p, max(0.0, center - half)), max(p, min(1.0, center + half))


def t_interval(xs: list[float]) -> tuple[float, float] | None:
    if len(xs) < 2:
        return None
    from scipy.stats import t

    m, s = mean(xs), stdev(xs)
    half = t.ppf(0.975, len(xs) - 1) * s / math.sqrt(len(xs))
    return m - half, m + half


BOOTSTRAP_RESAMPLES = 4000
BOOTSTRAP_SEED = 0  # a report is the same each time it is built


def bootstrap_interval(xs: list[float], low: float, high: float) -> tuple[float, float] | None:
    """The 95% percentile-bootstrap interval of the mean of `xs`, values of a metric in
    [low, high] (scipy.stats.bootstrap). Why percentile: every resampled mean lies between the
    smallest and largest value, so the interval stays inside the metric's range (Student-t's
    gave [-0.96, 2.21] for a precision); BCa is undefined on the ties small samples have. Like
    every bootstrap it is narrow for very few targets: n is printed beside it."""
    if len(xs) < 2:
        return None
    m = mean(xs)
    if min(xs) == max(xs):
        return m, m
    import numpy as np
    from scipy.stats import bootstrap

    res = bootstrap(
        (np.asarray(xs, dtype=float),),
        np.mean,
        confidence_level=0.95,
        n_resamples=BOOTSTRAP_RESAMPLES,
        method="percentile",
        rng=np.random.default_rng(BOOTSTRAP_SEED),
    )
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    # the mean's own rounding may step past the range's ends or past the estimate
    return max(low, min(lo, m)), min(high, max(hi, m))


def interval(
    values: list[float], method: str, metric: str | None = None
) -> tuple[float, float] | None:
    """A row's 95% interval: Wilson over its successes (v >= 0.5) for `wilson` rows; else, for
    a metric of known range (interp_harness.evaluator.metric_scale), the bootstrap interval
    inside it; else the Student-t interval of the mean (also used by the Inspect tasks'
    metrics)."""
    return interval_and_method(values, method, metric)[0]


def interval_and_method(
    values: list[float], method: str, metric: str | None = None
) -> tuple[tuple[float, float] | None, str]:
    """`interval` and the method it used ("wilson", "bootstrap" or "t")."""
    if method == "wilson":
        return wilson(sum(1 for v in values if v >= 0.5), len(values)), "wilson"
    scale = scale_of(metric) if metric else None
    if scale is not None:
        return bootstrap_interval(values, scale.low, scale.high), "bootstrap"
    return t_interval(values), "t"


def _score(ep: EpisodeSummary, metric: str):
    return next((s for s in ep.scores if s.metric == metric), None)


def reduce_epochs(values: list[float], reducer: EpochReducer, method: str) -> float:
    """One target's score from its epochs' scores (errored epochs already left out)."""
    if reducer == "mean":
        return mean(values)
    if reducer == "at_least_one" and method == "wilson":
        # a 0/1 success row counts v >= 0.5 as a success (as its Wilson interval does)
        return 1.0 if any(v >= 0.5 for v in values) else 0.0
    return max(values)  # "max", and "at_least_one" of a metric that is not a 0/1 success


def per_target(
    scored: Sequence[tuple[str, float]], reducer: EpochReducer, method: str
) -> tuple[list[float], str]:
    """Each target's scored epochs (`(target_id, value)` pairs) reduced to one value, in the order
    targets first appear, and the interval method for those values: a row's own, except that a
    reduction that leaves a value other than 0 or 1 (a mean of 0/1 epochs is a rate per target,
    not an outcome) takes the Student-t interval."""
    by_target: dict[str, list[float]] = defaultdict(list)
    for target, v in scored:
        by_target[target].append(v)
    values = [reduce_epochs(vs, reducer, method) for vs in by_target.values()]
    if any(v not in (0.0, 1.0) for v in values):
        method = "t"
    return values, method


def metric_interval(metric: str, records: list[Benchmark] | None = None) -> str:
    """How the report intervals `metric`: "wilson" when a report row takes it as a 0/1 success
    (also how at-least-one reduces it), else "t"."""
    rows = report_rows(records)
    return "wilson" if any(r[2] == metric and r[3] == "wilson" for r in rows) else "t"


def _row(
    agent: str,
    label: str,
    family: str,
    metric: str,
    method: str,
    table2: bool,
    init: bool,
    eps: list[EpisodeSummary],
    reducer: EpochReducer = "mean",
) -> ReportRow:
    values: list[float] = []
    errors: Counter[str] = Counter()
    ceilings: list[float] = []
    ceil_k = ceil_n = 0.0
    unconfigured: list[str] = []
    extra: Counter[str] = Counter()
    simulators: set[str] = set()
    used: list[EpisodeSummary] = []
    for ep in eps:
        sc = _score(ep, metric)
        if sc is not None and sc.status == "error" and sc.details.get("judge_configured") is False:
            unconfigured.append(sc.error or "no judge configured")
        if metric == "domain_iou" and sc is not None and sc.details.get("outcome"):
            extra[sc.details["outcome"]] += 1
        if ep.error_category and (sc is None or sc.status == "error"):
            errors[ep.error_category] += 1
            continue
        if sc is None:
            # no score for this row: the scorer failed as a whole, or the episode ended without
            # any score (interp_harness.harness.store.scores.missing_scores): an error, never a
            # silent gap
            failed = next(
                (s for s in ep.scores if s.metric == "scoring" and s.status == "error"), None
            )
            if failed is not None:
                errors[failed.error_category or "infrastructure"] += 1
            elif ep.status != "completed":
                errors[ep.error_category or ep.status] += 1
            continue
        if sc.status == "error":
            errors[sc.error_category or "infrastructure"] += 1
            continue
        if sc.value is None:
            continue  # e.g. domain IoU of an uncorrupted target: counted in `extra` only
        values.append(sc.value)
        used.append(ep)
        if sc.details.get("simulator"):
            simulators.add(str(sc.details["simulator"]))
        c = _score(ep, ceiling_metric(metric))
        if c is not None and c.status == "ok" and c.value is not None:
            ceilings.append(c.value)
            n = len(c.details.get("verdicts") or []) or 10
            ceil_k += c.value * n
            ceil_n += n
    units, epochs, epoch_var = len(eps), 1, None
    if any(e.epoch for e in eps):
        epoch_var = _epoch_variance(used, values)
        values, method = per_target(
            [(e.target_id, v) for e, v in zip(used, values, strict=True)], reducer, method
        )
        units = len({e.target_id for e in eps})
        epochs = max(e.epoch for e in eps) + 1
    ci, method = interval_and_method(values, method, metric)
    first = eps[0]
    row = ReportRow(
        agent=agent,
        category=label,
        family=family,
        metric=metric,
        exemplar_init=init,
        table2=table2,
        episodes=units,
        scored=len(values),
        value=mean(values) if values else None,
        ci_low=ci[0] if ci else None,
        ci_high=ci[1] if ci else None,
        ci_method=method,
        errors=dict(errors),
        mean_target_calls=mean(e.stats.target_calls for e in used) if used else None,
        mean_inputs=mean(e.stats.inputs for e in used) if used else None,
        extra=dict(extra),
        simulator=", ".join(sorted(simulators)) or None,
        epochs=epochs,
        epoch_var=epoch_var,
        run_id=first.run_id,
        config=first.config,
        floor_of=first.floor_of,
    )
    if metric in CEILING:
        _judge_verdict(row, ceilings, round(ceil_k), int(ceil_n), unconfigured)
    elif ceilings:  # a family's own reference scored the same way (no chance level known)
        row.judge_ceiling = mean(ceilings)
    return row


def _epoch_variance(used: list[EpisodeSummary], values: list[float]) -> float | None:
    """The mean over targets of the across-epoch sample variance (targets with at least two
    scored epochs)."""
    by_target: dict[str, list[float]] = defaultdict(list)
    for ep, v in zip(used, values, strict=True):
        by_target[ep.target_id].append(v)
    variances = [variance(vs) for vs in by_target.values() if len(vs) > 1]
    return mean(variances) if variances else None


def _judge_verdict(
    row: ReportRow, ceilings: list[float], k: int, n: int, unconfigured: list[str]
) -> None:
    """Fill the row's ceiling, chance and what they mean for its scores."""
    row.chance = CHANCE
    if ceilings:
        row.judge_ceiling = mean(ceilings)
        ci = wilson(k, n)
        if ci:
            row.ceiling_ci_low, row.ceiling_ci_high = ci
    if row.scored == 0 and unconfigured:
        row.judge_status = "not_configured"
        row.judge_note = f"description scores not computed: {unconfigured[0]}"
    elif row.scored == 0:
        return
    elif row.judge_ceiling is None:
        row.judge_status = "no_ceiling"
        row.judge_note = (
            "no judge ceiling measured (HARNESS_JUDGE_CEILING off, or its verdicts failed): "
            "these scores cannot be told apart from the judge's own limits"
        )
    elif (
        row.ceiling_ci_low is not None and row.ceiling_ci_low <= CHANCE
    ) or row.judge_ceiling < CHANCE + NEAR_CHANCE_MARGIN:
        row.judge_status = "near_chance"
        row.judge_note = (
            f"judge ceiling {row.judge_ceiling:.2f} ≈ chance ({CHANCE:.2f}): "
            "these description scores carry no information"
        )
    else:
        row.judge_status = "ok"


Who = tuple[str, str]  # (agent, run id): whose rows; a run id of "" pools an agent's summaries


def _whos(summaries: list[EpisodeSummary]) -> list[Who]:
    """Each agent's runs, agents by name: a run's rows are its own, so two runs of one agent on
    the same targets (two protocol modes, two option sets) are never pooled into one sample."""
    return sorted({(ep.agent, ep.run_id) for ep in summaries})


def build_report(summaries: list[EpisodeSummary], epoch_reducer: EpochReducer = "mean") -> Report:
    """The report of `summaries`, one set of rows per run (per agent where summaries name no
    run); targets sampled in several epochs are first reduced with `epoch_reducer` (per target
    and metric), so that n and the intervals count targets."""
    groups: dict[tuple[str, str, str, bool], list[EpisodeSummary]] = defaultdict(list)
    for ep in summaries:
        groups[(ep.agent, ep.run_id, ep.family, ep.stats.exemplar_init)].append(ep)
    rep = Report(episodes=len(summaries), errors=group_errors(summaries, by_agent=True))
    whos = _whos(summaries)
    agents = sorted({agent for agent, _ in whos})
    records = benchmarks()
    for agent, run_id in whos:
        for label, family, metric, method, table2 in report_rows(records):
            for init in (False, True):
                eps = groups.get((agent, run_id, family, init))
                if eps:
                    rep.rows.append(
                        _row(agent, label, family, metric, method, table2, init, eps, epoch_reducer)
                    )
    _baselines(rep.rows, groups, records)
    _merge_identical(rep.rows, groups)
    floored = [b for b in records if b.floors and b.headline_metric]
    for b in floored:
        # success by inputs needs a 0/1 headline (a Wilson row); a mean of rates has no success
        if any(r.metric == b.headline_metric and r.interval == "wilson" for r in b.report_rows):
            queries, unbinned = _queries(
                summaries, whos, b.family, b.headline_metric or "", epoch_reducer
            )
            rep.queries += queries
            rep.unbinned += unbinned
    # every family with a floor, whether or not it names a headline metric
    for b in (b for b in records if b.floors):
        if any(e.family == b.family for e in summaries):
            rep.notes += [
                f"no `{floor}` baseline in this run: {b.family} scores have no floor to compare "
                "with"
                for floor in b.floors
                if floor not in agents
            ]
    for r in rep.rows:
        if r.judge_note and r.table2:
            init = ", exemplar init" if r.exemplar_init else ""
            rep.notes.append(f"{r.agent} / {r.category}{init}: {r.judge_note}")
    if any(r.epochs > 1 for r in rep.rows):
        rep.notes.append(
            f"repeated samples: each target's epochs reduced with `{epoch_reducer}` (errored "
            "epochs left out) before averaging over targets; n counts targets, errors count "
            "epochs; epoch var: mean over targets of the across-epoch sample variance"
        )
    if any(q.epochs > 1 for q in rep.queries):
        rep.notes.append(
            "score versus queries with repeated samples: a target sits in the bin of its "
            "epochs' mean inputs, its scored epochs reduced as above; n counts targets"
        )
    if rep.unbinned:
        rep.notes.append(
            f"score versus queries: {rep.unbinned} episode(s) without a score (errors) are in no "
            "bin"
        )
    rep.notes.append(
        "95% intervals: Wilson for success rates (0/1 outcomes); percentile bootstrap for means "
        "of a metric with a known range (inside it); Student-t for other means"
    )
    return rep


NEAR_BASELINE_MARGIN = NEAR_CHANCE_MARGIN  # the same reasoning: see NEAR_CHANCE_MARGIN


def _floor_whos(
    who: Who,
    family: str,
    groups: dict[tuple[str, str, str, bool], list[EpisodeSummary]],
    records: list[Benchmark],
) -> list[Who]:
    """The floor runs of `who`'s run on `family` (a floor run names the run it is the floor of);
    without run ids, the family's floor agents."""
    agent, run_id = who
    floors = next((b.floors for b in records if b.family == family), ())
    out = []
    for (a, r, fam, _), eps in groups.items():
        if fam != family or (a, r) == who or (a, r) in out:
            continue
        if (run_id and eps[0].floor_of == run_id) or (not run_id and not r and a in floors):
            out.append((a, r))
    return out if agent not in floors else []


def _vacuous(metric: str, eps: list[EpisodeSummary]) -> float | None:
    """The mean of the vacuous explanation's score (`<metric>_vacuous`), when scored."""
    vals = [
        s.value
        for e in eps
        if (s := _score(e, f"{metric}_vacuous")) and s.status == "ok" and s.value is not None
    ]
    return mean(vals) if vals else None


def _baselines(
    rows: list[ReportRow],
    groups: dict[tuple[str, str, str, bool], list[EpisodeSummary]],
    records: list[Benchmark],
) -> None:
    """Each row's baseline (what a trivial answer scores on the same targets: the vacuous
    explanation's score, else the metric's chance level, else the floor run's row) and the
    no-information flag where the row's ceiling is within NEAR_BASELINE_MARGIN of it."""
    index = {(r.agent, r.run_id, r.family, r.metric, r.exemplar_init): r for r in rows}
    for r in rows:
        eps = groups[(r.agent, r.run_id, r.family, r.exemplar_init)]
        scale = scale_of(r.metric)
        floors = [
            f
            for who in _floor_whos((r.agent, r.run_id), r.family, groups, records)
            if (f := index.get((*who, r.family, r.metric, r.exemplar_init))) is not None
            and f.value is not None
        ]
        if r.metric in DESCRIPTIVE:  # a fact about the test set, not a score: nothing to beat
            continue
        if (v := _vacuous(r.metric, eps)) is not None:
            r.baseline, r.baseline_source = v, "vacuous"
        elif scale is not None and scale.trivial is not None:
            # chance is exact where the metric defines it (0 for a correlation); a floor run's
            # mean is one noisy draw of it
            r.baseline, r.baseline_source = scale.trivial, "chance"
        elif floors:
            r.baseline, r.baseline_source = floors[0].value, f"floor {floors[0].agent}"
        if r.judge_status == "near_chance":
            r.no_information = True
        elif (
            r.judge_status is None
            and r.scored
            and r.judge_ceiling is not None
            and r.baseline is not None
            and _near_baseline(r.judge_ceiling, r.baseline, scale)
        ):
            r.no_information = True
            r.judge_note = (
                f"ceiling {r.judge_ceiling:.2f} ≈ baseline {r.baseline:.2f} "
                f"({r.baseline_source}): these scores carry no information"
            )


def _near_baseline(ceiling: float, baseline: float, scale: Scale | None) -> bool:
    """Whether the reference does no better than the baseline by NEAR_BASELINE_MARGIN."""
    if scale is not None and scale.lower_is_better:
        return ceiling > baseline - NEAR_BASELINE_MARGIN
    return ceiling < baseline + NEAR_BASELINE_MARGIN


def _outcomes(eps: list[EpisodeSummary], metric: str) -> list[tuple[str, float | None]]:
    """Every episode's (status, value) on `metric` and on its ceiling, in order."""
    out: list[tuple[str, float | None]] = []
    for e in eps:
        for m in (metric, ceiling_metric(metric)):
            s = _score(e, m)
            out.append(("none", None) if s is None else (s.status, s.value))
    return out


def _merge_identical(
    rows: list[ReportRow], groups: dict[tuple[str, str, str, bool], list[EpisodeSummary]]
) -> None:
    """Rows of one agent, run and family whose every episode scored the same on both metrics
    (and on their ceilings) are one row: a balanced test set gives accuracy = balanced accuracy,
    and a 0/1 decision's AUC equals its balanced accuracy. The later rows name the first in
    `merged_into`; the first lists them in `same_as`."""
    seen: dict[tuple, ReportRow] = {}
    for r in rows:
        if not r.scored:
            continue
        eps = groups[(r.agent, r.run_id, r.family, r.exemplar_init)]
        key = (r.agent, r.run_id, r.family, r.exemplar_init, tuple(_outcomes(eps, r.metric)))
        first = seen.setdefault(key, r)
        if first is not r:
            first.same_as.append(r.category)
            r.merged_into = first.category


def _bin(inputs: float) -> str:
    """The query bin of a number of inputs (a target's mean over its epochs may fall between two
    integer bounds: each bin reaches up to the next one's start)."""
    return next(label for label, _, hi in QUERY_BINS if inputs <= hi)


class _Unit(BaseModel):
    """What a score-versus-queries bin counts: an episode, or a target with its epochs."""

    inputs: float
    calls: float
    scored: list[tuple[str, float]]  # (target, value) of its scored episodes


def _units(eps: list[EpisodeSummary], metric: str) -> list[_Unit]:
    """One unit per episode; with repeated samples one per target, its epochs' mean inputs and
    calls and its scored epochs (reduced by the caller with the row's reducer), keyed by the
    unit."""
    groups: dict[str, list[EpisodeSummary]] = defaultdict(list)
    repeated = any(e.epoch for e in eps)
    for e in eps:
        groups[e.target_id if repeated else e.episode_id].append(e)
    return [
        _Unit(
            inputs=mean(e.stats.inputs for e in g),
            calls=mean(e.stats.target_calls for e in g),
            scored=[
                (key, s.value)
                for e in g
                if (s := _score(e, metric)) and s.status == "ok" and s.value is not None
            ],
        )
        for key, g in groups.items()
    ]


def _queries(
    summaries: list[EpisodeSummary],
    whos: list[Who],
    family: str,
    metric: str,
    reducer: EpochReducer = "mean",
) -> tuple[list[QueryRow], int]:
    """Success on `metric` by number of inputs used, per run (the family's floor beside them),
    and how many units had no score; with repeated samples per target, each target's epochs
    reduced first (as the rows are). A unit without a score (every episode of it an error) is
    in no bin: an episode that failed before calling the target used 0 inputs, which says
    nothing about what 0 inputs achieve."""
    out = []
    unbinned = 0
    for agent, run_id in whos:
        eps = [
            e for e in summaries if e.agent == agent and e.run_id == run_id and e.family == family
        ]
        if not eps:
            continue
        epochs = max((e.epoch for e in eps), default=0) + 1
        units = [u for u in _units(eps, metric) if u.scored]
        unbinned += len(_units(eps, metric)) - len(units)
        for label, _, _ in QUERY_BINS:
            binned = [u for u in units if _bin(u.inputs) == label]
            if not binned:
                continue
            scored = [pair for u in binned for pair in u.scored]
            if epochs > 1:
                values, method = per_target(scored, reducer, "wilson")
            else:
                values, method = [v for _, v in scored], "wilson"
            ci, method = interval_and_method(values, method, metric)
            success = None
            if values:  # a share of successes; a mean of per-target rates otherwise
                wins = sum(1 for v in values if v >= 0.5)
                success = wins / len(values) if method == "wilson" else mean(values)
            out.append(
                QueryRow(
                    agent=agent,
                    bin=label,
                    run_id=run_id,
                    config=eps[0].config,
                    family=family,
                    metric=metric,
                    episodes=len(binned),
                    scored=len(values),
                    success=success,
                    ci_low=ci[0] if ci else None,
                    ci_high=ci[1] if ci else None,
                    ci_method=method,
                    mean_inputs=mean(u.inputs for u in binned),
                    mean_target_calls=mean(u.calls for u in binned),
                    epochs=epochs,
                )
            )
    return out, unbinned


def _fmt(v: float | None, nd: int = 2) -> str:
    return "-" if v is None else f"{v:.{nd}f}"


# Narrow terminals: the report fits 100 columns. Agents head their rows (not a column), a CI's
# method, a row's extra counts, its errors' categories and the judge's chance are said once in
# the notes under the table rather than in every cell.
NO_INFO = "†"  # marks a row whose judge ceiling is near chance


class _Heading:
    """An agent's name over its rows. It takes at most the room the other columns leave, and
    wraps there: a name longer than the labels would otherwise widen the first column until
    every other column is squeezed (n shown as "2…")."""

    def __init__(self, name: str, style: str = "bold") -> None:
        self.text = Text(name, style=style, overflow="fold", no_wrap=False)
        self.beside = 0  # the width of the other columns, set once the table is filled

    def __rich_measure__(self, console: object, options: ConsoleOptions) -> Measurement:
        width = min(self.text.cell_len, max(8, options.max_width - self.beside))
        return Measurement(width, width)

    def __rich_console__(self, console: object, options: ConsoleOptions) -> RenderResult:
        if self.text.style == "dim":  # a run's line (mode, options as JSON): wrapped at spaces
            yield self.text
            return
        # wrapped after a '.' or ':' of a `module:Class` path where it can be, not mid-word (and
        # between the parts of a run's heading)
        lines = [""]
        plain = self.text.plain.replace(" · ", " · \0")  # a run's heading: between its parts
        for part in plain.replace(".", ".\0").replace(":", ":\0").split("\0"):
            if lines[-1] and len(lines[-1]) + len(part) > options.max_width:
                lines.append("")
            lines[-1] += part
        yield Text("\n".join(lines), style=self.text.style, overflow="fold", no_wrap=False)


def _width_beside(table: Table) -> int:
    """The width the columns after the first take (cells, headers, the 2 columns between)."""
    widths = [
        max(
            [Text.from_markup(c.header).cell_len if isinstance(c.header, str) else 0]
            + [Text.from_markup(x).cell_len for x in c.cells if isinstance(x, str)]
        )
        for c in table.columns[1:]
    ]
    return sum(widths) + 2 * len(widths)


def _compact(title: str, *columns: Column) -> Table:
    return Table(
        *columns,
        title=title,
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        padding=(0, 1, 0, 0),
    )


def render_report(report: Report) -> Group:
    right = {"justify": "right", "no_wrap": True}
    main = _compact(
        "Scores (FIND Table 2 layout)",
        Column("agent / category", no_wrap=True),
        Column("score", **right),  # type: ignore[arg-type]
        Column("95% CI", no_wrap=True),
        Column("n", **right),  # type: ignore[arg-type]
        Column("err.", **right),  # type: ignore[arg-type]
        Column("base", no_wrap=True),
        Column("ceiling", no_wrap=True),
        # target calls per episode are in the score-versus-queries table and the JSON: the
        # baseline column took their room in 100 columns
        Column("inputs", **right),  # type: ignore[arg-type]
    )
    # repeated samples only: a run with one epoch per target renders as it always did
    with_var = any(r.epochs > 1 for r in report.rows)
    if with_var:
        main.add_column("ep.var", justify="right", no_wrap=True)
    notes: list[str] = []
    who: tuple[str, str] | None = None
    headings: list[_Heading] = []
    for r in _display_order(report.rows):
        if (r.agent, r.run_id) != who:
            who = (r.agent, r.run_id)
            headings += _headings(main, r.agent, r.run_id, r.config, r.floor_of)
        ci = f"[{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]" if r.ci_low is not None else "-"
        name = r.category + (" (init)" if r.exemplar_init else "")
        if r.simulator:
            name += f" [{r.simulator}]"
        if r.merged_into is not None:  # its scores are the row above's, episode by episode
            main.add_row(f"  [dim]{escape(name)}[/dim]", "=", "", f"{r.scored}/{r.episodes}")
            continue
        label = "  " + (escape(name) if r.table2 else f"[dim]{escape(name)}[/dim]")
        if r.extra:
            counts = ", ".join(f"{k} {v}" for k, v in sorted(r.extra.items()))
            run = f" (run {r.run_id})" if r.run_id else ""
            notes.append(f"{r.agent}{run} / {name}: {counts}")
        score = _fmt(r.value)
        if r.no_information:  # shown, but not as a result
            label += f" {NO_INFO}"
            score, ci = f"[dim]({score})[/dim]", f"[dim]{ci}[/dim]"
        elif r.judge_status == "not_configured":
            score = "no judge"
        main.add_row(
            label,
            score,
            ci,
            f"{r.scored}/{r.episodes}",
            str(sum(r.errors.values())),
            _baseline_cell(r),
            _ceiling_cell(r),
            _fmt(r.mean_inputs, 0),
            *([_fmt(r.epoch_var, 3)] if with_var else []),
        )
    beside = _width_beside(main)
    for h in headings:
        h.beside = beside
    chance = sorted({r.chance for r in report.rows if r.chance is not None})
    if chance:
        notes.append(
            "judge ceiling: the ground-truth descriptions through the same judge, with a Wilson "
            "interval over its triplets (chance " + ", ".join(f"{c:.2f}" for c in chance) + ")"
        )
    if any(r.judge_ceiling is not None and r.chance is None for r in report.rows):
        notes.append(
            "ceiling (rows without a chance level): the benchmark's reference answer through the "
            "same scorer, averaged over the same targets"
        )
    if any(r.no_information for r in report.rows):
        notes.append(
            f"{NO_INFO}, (score): the row's ceiling is near its baseline (chance, the floor or the "
            "vacuous explanation): no information (see above)"
        )
    sources = sorted({r.baseline_source or "" for r in report.rows} - {""})
    if sources:
        notes.append(
            "base: what a trivial answer scores on the same targets: "
            + "; ".join(_BASE_SOURCES.get(s.split()[0], s) for s in sources)
        )
    if any(r.same_as for r in report.rows):
        notes.append("score =: every episode scored exactly as on the row above (shown once)")
    if any(r.errors for r in report.rows):
        notes.append("errors: episodes left out of the mean (never scored 0); see Errors below")
    if with_var:
        notes.append("n: targets scored / targets; inputs: mean over the scored epochs")
    else:
        notes.append("n: episodes scored / episodes; inputs: mean over the scored episodes")
    parts: list[Table | str] = [main]
    parts += [f"- {escape(n)}" for n in report.notes + notes]
    if report.queries:
        parts.append(_queries_table(report))
    if report.errors:
        parts.append(errors_table(report.errors))
    # one part under another, each given the console's whole width (a grid would size every
    # part to one column's measure and squeeze a table narrower than the widest part)
    return Group(*parts)


_BASE_SOURCES = {
    "chance": "c = chance (a constant answer)",
    "floor": "f = the floor run's mean",
    "vacuous": "v = the vacuous explanation's mean",
}


def run_line(run_id: str, config: str, floor_of: str | None) -> str:
    """The line under a run's agent: its run id and configuration (mode and options)."""
    parts = []
    if run_id:
        parts.append(f"run {run_id}" + (f" (floor of {floor_of})" if floor_of else ""))
    if config:
        parts.append(config)
    return " · ".join(parts)


def _headings(
    table: Table, agent: str, run_id: str, config: str, floor_of: str | None
) -> list[_Heading]:
    """The rows over a run's rows: its agent, then (dim) its run and configuration."""
    out = [_Heading(agent)]
    if line := run_line(run_id, config, floor_of):
        out.append(_Heading(line, style="dim"))
    for h in out:
        table.add_row(h, end_section=False)
    return out


def _display_order(rows: list[ReportRow]) -> list[ReportRow]:
    """The rows in report order, each merged row right under the row it equals."""
    merged: dict[tuple, list[ReportRow]] = defaultdict(list)
    for r in rows:
        if r.merged_into is not None:
            key = (r.agent, r.run_id, r.family, r.exemplar_init, r.merged_into)
            merged[key].append(r)
    out = []
    for r in rows:
        if r.merged_into is None:
            out.append(r)
            out += merged.get((r.agent, r.run_id, r.family, r.exemplar_init, r.category), [])
    return out


def _baseline_cell(r: ReportRow) -> str:
    if r.baseline is None:
        return "-"
    return f"{r.baseline:.2f}{(r.baseline_source or ' ')[0]}"


def _ceiling_cell(r: ReportRow) -> str:
    if r.judge_ceiling is None:
        return "-"
    if r.ceiling_ci_low is None:
        return f"{r.judge_ceiling:.2f}"
    return f"{r.judge_ceiling:.2f} [{_fmt(r.ceiling_ci_low)}, {_fmt(r.ceiling_ci_high)}]"


def errors_table(errors: list[ErrorGroup], width: int = 300) -> Table:
    """Every error with its message, grouped (errors are states, shown, never scores)."""
    t = Table(title="Errors (not scored: left out of the means above)")
    for col in ("agent", "episodes", "where", "category", "message"):
        t.add_column(col, justify="right" if col == "episodes" else "left")
    for g in errors:
        where = g.where + (f" ({g.metric})" if g.metric else "")
        said = g.cause or g.message  # the cause first: `harness runs show EPISODE` has the text
        msg = said if len(said) <= width else said[: width - 1] + "…"
        # a long agent name wraps after its ':' rather than be cut
        t.add_row(
            _Heading(g.agent or "", style=""), str(g.episodes), where, g.category, escape(msg)
        )
    return t


def _queries_table(report: Report) -> Table:
    """Success per inputs bin, one agent's bins under its name (a heading row, as in the scores
    table: a long `module:Class` wraps there instead of being cut)."""
    what = ", ".join(dict.fromkeys(f"{r.family} {r.metric}" for r in report.queries))
    # repeated samples: the rows count targets, and a mean of epochs has a Student-t interval
    repeated = any(r.epochs > 1 for r in report.queries)
    methods = {r.ci_method for r in report.queries}
    ci_title = "95% CI (Wilson)" if methods == {"wilson"} else "95% CI"
    right = {"justify": "right", "no_wrap": True}
    q = _compact(
        f"Score versus queries (inputs used): {what}",
        Column("agent / inputs", no_wrap=True),
        Column("targets" if repeated else "episodes", **right),  # type: ignore[arg-type]
        Column("success", **right),  # type: ignore[arg-type]
        Column(ci_title, no_wrap=True),
        Column("mean inputs", **right),  # type: ignore[arg-type]
        Column("mean calls", **right),  # type: ignore[arg-type]
    )
    headings: list[_Heading] = []
    who: tuple[str, str] | None = None
    for r in report.queries:
        if (r.agent, r.run_id) != who:
            who = (r.agent, r.run_id)
            headings += _headings(q, r.agent, r.run_id, r.config, None)
        ci = f"[{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]" if r.ci_low is not None else "-"
        if ci_title == "95% CI" and r.ci_low is not None:
            ci += f" {r.ci_method}"
        q.add_row(
            f"  {r.bin}",
            str(r.episodes),
            _fmt(r.success),
            ci,
            _fmt(r.mean_inputs, 1),
            _fmt(r.mean_target_calls, 1),
        )
    beside = _width_beside(q)
    for h in headings:
        h.beside = beside
    return q
