"""Run reports in the layout of FIND's Table 2, with counts, errors and 95% confidence intervals.

Rows per agent and exemplar setting (with / without exemplar initialisation):
numeric (share of functions with NMSE < 0.1), strings code, strings unit test, entities,
relations; then secondary rows (FIND-compatible string code, strict unit-test parsing, numeric
domain IoU). Intervals: Wilson score interval for rates of 0/1 outcomes (numeric success);
Student-t interval of the mean for per-function means (string code, unit tests, IoU).
Episodes in an error state, or whose score for the row is an error, are counted under `errors`
by category and left out of the mean (never counted as 0).

Every numeric report also carries a score-versus-queries table (success by number of inputs the
agent used) for each agent, including the `interpolation` baseline when the run has it (the floor:
see benchmarks/interpolation_floor.py), because FIND's code metric can be won by sampling densely.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from statistics import mean, stdev

from pydantic import BaseModel, Field
from rich.markup import escape
from rich.table import Table

from evaluator.api import EpisodeSummary
from evaluator.errors import ErrorGroup, group_errors

Z95 = 1.959963984540054

# (row label, family, metric, interval method, is a Table 2 row)
ROWS: list[tuple[str, str, str, str, bool]] = [
    ("numeric (NMSE < 0.1)", "numeric", "code_success", "wilson", True),
    ("strings, code", "strings", "string_exact", "t", True),
    ("strings, unit test", "strings", "unit_test", "t", True),
    ("entities", "entities", "unit_test", "t", True),
    ("relations", "relations", "unit_test", "t", True),
    ("strings, code (FIND-compat)", "strings", "string_exact_find", "t", False),
    ("strings, unit test (strict)", "strings", "unit_test_strict", "t", False),
    ("entities (strict)", "entities", "unit_test_strict", "t", False),
    ("relations (strict)", "relations", "unit_test_strict", "t", False),
    ("numeric, domain IoU (corrupted)", "numeric", "domain_iou", "t", False),
]
CEILING = {"unit_test": "unit_test_ceiling", "unit_test_strict": "unit_test_ceiling_strict"}
QUERY_BINS: list[tuple[str, int, float]] = [
    ("1-16", 0, 16),
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
    mean_target_calls: float | None = None
    mean_inputs: float | None = None
    extra: dict[str, int] = Field(default_factory=dict)  # e.g. domain outcomes


class QueryRow(BaseModel):
    agent: str
    bin: str
    episodes: int
    success: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    mean_inputs: float | None = None
    mean_target_calls: float | None = None


class Report(BaseModel):
    rows: list[ReportRow] = Field(default_factory=list)
    queries: list[QueryRow] = Field(default_factory=list)
    episodes: int = 0
    notes: list[str] = Field(default_factory=list)
    errors: list[ErrorGroup] = Field(default_factory=list)


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    if n == 0:
        return None
    p = k / n
    den = 1 + z * z / n
    center = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, center - half), min(1.0, center + half)


def t_interval(xs: list[float]) -> tuple[float, float] | None:
    if len(xs) < 2:
        return None
    from scipy.stats import t

    m, s = mean(xs), stdev(xs)
    half = t.ppf(0.975, len(xs) - 1) * s / math.sqrt(len(xs))
    return m - half, m + half


def _score(ep: EpisodeSummary, metric: str):
    return next((s for s in ep.scores if s.metric == metric), None)


def _row(
    agent: str,
    label: str,
    family: str,
    metric: str,
    method: str,
    table2: bool,
    init: bool,
    eps: list[EpisodeSummary],
) -> ReportRow:
    values: list[float] = []
    errors: Counter[str] = Counter()
    ceilings: list[float] = []
    extra: Counter[str] = Counter()
    used: list[EpisodeSummary] = []
    for ep in eps:
        sc = _score(ep, metric)
        if metric == "domain_iou" and sc is not None and sc.details.get("outcome"):
            extra[sc.details["outcome"]] += 1
        if ep.error_category and (sc is None or sc.status == "error"):
            errors[ep.error_category] += 1
            continue
        if sc is None:
            if ep.status != "completed":
                errors[ep.error_category or ep.status] += 1
            continue
        if sc.status == "error":
            errors[sc.error_category or "infrastructure"] += 1
            continue
        if sc.value is None:
            continue  # e.g. domain IoU of an uncorrupted target: counted in `extra` only
        values.append(sc.value)
        used.append(ep)
        if metric in CEILING:
            c = _score(ep, CEILING[metric])
            if c is not None and c.status == "ok" and c.value is not None:
                ceilings.append(c.value)
    if method == "wilson":
        ci = wilson(sum(1 for v in values if v >= 0.5), len(values))
    else:
        ci = t_interval(values)
    return ReportRow(
        agent=agent,
        category=label,
        family=family,
        metric=metric,
        exemplar_init=init,
        table2=table2,
        episodes=len(eps),
        scored=len(values),
        value=mean(values) if values else None,
        ci_low=ci[0] if ci else None,
        ci_high=ci[1] if ci else None,
        ci_method=method,
        errors=dict(errors),
        judge_ceiling=mean(ceilings) if ceilings else None,
        mean_target_calls=mean(e.stats.target_calls for e in used) if used else None,
        mean_inputs=mean(e.stats.inputs for e in used) if used else None,
        extra=dict(extra),
    )


def build_report(summaries: list[EpisodeSummary]) -> Report:
    groups: dict[tuple[str, str, bool], list[EpisodeSummary]] = defaultdict(list)
    for ep in summaries:
        groups[(ep.agent, ep.family, ep.stats.exemplar_init)].append(ep)
    rep = Report(episodes=len(summaries), errors=group_errors(summaries, by_agent=True))
    agents = sorted({ep.agent for ep in summaries})
    for agent in agents:
        for label, family, metric, method, table2 in ROWS:
            for init in (False, True):
                eps = groups.get((agent, family, init))
                if eps:
                    rep.rows.append(_row(agent, label, family, metric, method, table2, init, eps))
    for agent in agents:
        eps = [e for e in summaries if e.agent == agent and e.family == "numeric"]
        for label, lo, hi in QUERY_BINS:
            binned = [e for e in eps if lo <= e.stats.inputs <= hi]
            scored = [
                (e, s)
                for e in binned
                if (s := _score(e, "code_success")) and s.status == "ok" and s.value is not None
            ]
            if not binned:
                continue
            k = sum(1 for _, s in scored if s.value >= 0.5)
            ci = wilson(k, len(scored))
            rep.queries.append(
                QueryRow(
                    agent=agent,
                    bin=label,
                    episodes=len(binned),
                    success=k / len(scored) if scored else None,
                    ci_low=ci[0] if ci else None,
                    ci_high=ci[1] if ci else None,
                    mean_inputs=mean(e.stats.inputs for e in binned),
                    mean_target_calls=mean(e.stats.target_calls for e in binned),
                )
            )
    if any(e.family == "numeric" for e in summaries) and "interpolation" not in agents:
        rep.notes.append(
            "no `interpolation` baseline in this run: numeric scores have no floor to compare with "
            "(an agent interpolating 129 samples already passes 505/850 released functions)"
        )
    rep.notes.append("95% intervals: Wilson for numeric success rates; Student-t for means")
    return rep


def _fmt(v: float | None, nd: int = 2) -> str:
    return "-" if v is None else f"{v:.{nd}f}"


def render_report(report: Report) -> Table:
    main = Table(title="Scores (FIND Table 2 layout)", caption="; ".join(report.notes) or None)
    for col in (
        "agent",
        "category",
        "init",
        "score",
        "95% CI",
        "n",
        "errors",
        "judge ceiling",
        "calls",
        "inputs",
    ):
        main.add_column(
            col, justify="right" if col in ("score", "n", "calls", "inputs") else "left"
        )
    for r in report.rows:
        ci = f"[{_fmt(r.ci_low)}, {_fmt(r.ci_high)}] {r.ci_method}" if r.ci_low is not None else "-"
        errs = ", ".join(f"{k}: {v}" for k, v in sorted(r.errors.items())) or "0"
        label = r.category if r.table2 else f"[dim]{r.category}[/dim]"
        if r.extra:
            label += " (" + ", ".join(f"{k} {v}" for k, v in sorted(r.extra.items())) + ")"
        main.add_row(
            r.agent,
            label,
            "yes" if r.exemplar_init else "no",
            _fmt(r.value),
            ci,
            f"{r.scored}/{r.episodes}",
            errs,
            _fmt(r.judge_ceiling),
            _fmt(r.mean_target_calls, 1),
            _fmt(r.mean_inputs, 1),
        )
    parts = [main]
    if report.queries:
        parts.append(_queries_table(report))
    if report.errors:
        parts.append(errors_table(report.errors))
    if len(parts) == 1:
        return main
    outer = Table.grid()
    for p in parts:
        outer.add_row(p)
    return outer


def errors_table(errors: list[ErrorGroup], width: int = 300) -> Table:
    """Every error with its message, grouped (errors are states, shown, never scores)."""
    t = Table(title="Errors (not scored: left out of the means above)")
    for col in ("agent", "episodes", "where", "category", "message"):
        t.add_column(col, justify="right" if col == "episodes" else "left")
    for g in errors:
        where = g.where + (f" ({g.metric})" if g.metric else "")
        msg = g.message if len(g.message) <= width else g.message[: width - 1] + "…"
        t.add_row(g.agent or "", str(g.episodes), where, g.category, escape(msg))
    return t


def _queries_table(report: Report) -> Table:
    q = Table(title="Numeric score versus queries (inputs used)")
    for col in (
        "agent",
        "inputs",
        "episodes",
        "NMSE<0.1",
        "95% CI (Wilson)",
        "mean inputs",
        "mean calls",
    ):
        q.add_column(col)
    for r in report.queries:
        ci = f"[{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]" if r.ci_low is not None else "-"
        q.add_row(
            r.agent,
            r.bin,
            str(r.episodes),
            _fmt(r.success),
            ci,
            _fmt(r.mean_inputs, 1),
            _fmt(r.mean_target_calls, 1),
        )
    return q
