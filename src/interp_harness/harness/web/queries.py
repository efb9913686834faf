"""Store reads for the pages, paginated by keyset so that a page costs the same with 10 or 10,000
episodes: runs by (created_at, id), a run's episodes by idx (unique per run), counts by SQL
aggregates over the indexed run_id columns, and only for the runs or episodes on the page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import and_, case, func, or_, select
from sqlalchemy.orm import defer
from sqlmodel import Session

from interp_harness.evaluator.report import metric_interval
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.runs.views import MetricSummary
from interp_harness.harness.store.models import RUN_TERMINAL, Episode, Event, Run, Score
from interp_harness.harness.store.repo import Store

RUNS_PER_PAGE = 25
EPISODES_PER_PAGE = 50


def _rows(store: Store, q: Any) -> list[Any]:
    with Session(store.engine) as s:
        rows = list(s.scalars(q))
        s.expunge_all()
        return rows


@dataclass
class RunsPage:
    runs: list[Run]
    next_cursor: str | None  # "<created_at iso>|<id>" of the last run shown, when more follow
    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # run -> status -> n
    errors: dict[str, dict[str, int]] = field(default_factory=dict)  # run -> category -> n
    last_event: dict[str, int] = field(default_factory=dict)  # run -> newest event id
    metrics: dict[str, list[MetricSummary]] = field(default_factory=dict)  # run -> summaries
    imported: set[str] = field(default_factory=set)  # runs read from a file, not executed here


def parse_cursor(cursor: str | None) -> tuple[datetime, str] | None:
    """A runs cursor; None (the first page) when absent or malformed."""
    if not cursor or "|" not in cursor:
        return None
    stamp, _, run_id = cursor.partition("|")
    try:
        return datetime.fromisoformat(stamp), run_id
    except ValueError:
        return None


def runs_page(
    store: Store,
    *,
    status: str | None = None,
    agent: str | None = None,
    dataset: str | None = None,
    cursor: str | None = None,
    limit: int = RUNS_PER_PAGE,
) -> RunsPage:
    """Newest first; `cursor` continues after the last run of the previous page."""
    q = select(Run).order_by(Run.created_at.desc(), Run.id.desc()).limit(limit + 1)
    if status:
        q = q.where(Run.status == status)
    if agent:
        q = q.where(Run.agent == agent)
    if dataset:
        q = q.where(Run.dataset == dataset)
    if (c := parse_cursor(cursor)) is not None:
        stamp, run_id = c
        q = q.where(or_(Run.created_at < stamp, and_(Run.created_at == stamp, Run.id < run_id)))
    runs = _rows(store, q)
    more = len(runs) > limit
    runs = runs[:limit]
    page = RunsPage(runs, f"{runs[-1].created_at.isoformat()}|{runs[-1].id}" if more else None)
    ids = [r.id for r in runs]
    if not ids:
        return page
    with store.engine.connect() as conn:
        for run_id, status_, n in conn.execute(
            select(Episode.run_id, Episode.status, func.count())
            .where(Episode.run_id.in_(ids))
            .group_by(Episode.run_id, Episode.status)
        ):
            page.counts.setdefault(run_id, {})[status_] = n
        for run_id, cat, n in conn.execute(
            select(Episode.run_id, Episode.error_category, func.count())
            .where(Episode.run_id.in_(ids), Episode.status == "error")
            .group_by(Episode.run_id, Episode.error_category)
        ):
            page.errors.setdefault(run_id, {})[cat or "unknown"] = n
        # ended episodes of finished runs without any score: an error state (as in RunDetail)
        for run_id, n in conn.execute(
            select(Episode.run_id, func.count())
            .join(Run, Run.id == Episode.run_id)
            .where(
                Episode.run_id.in_(ids),
                Run.status.in_(RUN_TERMINAL),
                Episode.status.in_(("completed", "budget_exhausted")),
                ~select(Score.id).where(Score.episode_id == Episode.id).exists(),
            )
            .group_by(Episode.run_id)
        ):
            page.errors.setdefault(run_id, {})["unscored"] = n
        for run_id, last in conn.execute(
            select(Event.run_id, func.max(Event.id))
            .where(Event.run_id.in_(ids))
            .group_by(Event.run_id)
        ):
            page.last_event[run_id] = last
        page.metrics = _metric_summaries(conn, runs)
    page.imported = store.events.imported_runs(ids)
    return page


def _metric_summaries(conn: Any, runs: list[Run]) -> dict[str, list[MetricSummary]]:
    """RunDetail.metrics (interp_harness.harness.runs.views.metric_summaries) of `runs` as two SQL aggregates
    instead of loading every score row of every run: per (run, metric, target) the ok values'
    mean, max and any-success (a target's epochs), then per (run, metric) the mean over targets
    of each; the run's epoch reducer picks one (interp_harness.evaluator.report.reduce_epochs), so n counts
    targets as the report does."""
    ok = and_(Score.status == "ok", Score.value.is_not(None))
    per_target = (
        select(
            Episode.run_id.label("run_id"),
            Score.metric.label("metric"),
            func.avg(case((ok, Score.value))).label("t_mean"),
            func.max(case((ok, Score.value))).label("t_max"),
            func.max(case((ok, case((Score.value >= 0.5, 1.0), else_=0.0)))).label("t_any"),
            func.count(case((Score.status == "error", 1))).label("t_err"),
        )
        .join(Episode, Episode.id == Score.episode_id)
        .where(Episode.run_id.in_([r.id for r in runs]))
        .group_by(Episode.run_id, Score.metric, Episode.target_id)
        .subquery()
    )
    q = (
        select(
            per_target.c.run_id,
            per_target.c.metric,
            func.avg(per_target.c.t_mean),
            func.avg(per_target.c.t_max),
            func.avg(per_target.c.t_any),
            func.count(per_target.c.t_mean),
            func.sum(per_target.c.t_err),
        )
        .group_by(per_target.c.run_id, per_target.c.metric)
        .order_by(per_target.c.run_id, per_target.c.metric)
    )
    reducers = {r.id: _reducer(r) for r in runs}
    out: dict[str, list[MetricSummary]] = {}
    for run_id, metric, by_mean, by_max, by_any, n, n_err in conn.execute(q):
        reducer = reducers[run_id]
        if reducer == "at_least_one" and metric_interval(metric) == "wilson":
            value = by_any
        else:  # at-least-one of a metric that is not a 0/1 success is its max (reduce_epochs)
            value = by_mean if reducer == "mean" else by_max
        out.setdefault(run_id, []).append(
            MetricSummary(metric=metric, n=n, n_errors=int(n_err or 0), mean=value)
        )
    return out


def _reducer(run: Run) -> str:
    try:
        return RunSpec.model_validate(run.spec).epoch_reducer
    except ValueError:  # a spec this version cannot read: each epoch counts as stored
        return "mean"


def filter_options(store: Store) -> tuple[list[str], list[str]]:
    """The agents and datasets that have runs (for the filter menus)."""
    with store.engine.connect() as conn:
        agents = list(conn.scalars(select(Run.agent).distinct().order_by(Run.agent)))
        datasets = list(conn.scalars(select(Run.dataset).distinct().order_by(Run.dataset)))
    return agents, datasets


@dataclass
class EpisodesPage:
    episodes: list[Episode]
    prev_before: int | None  # idx to pass as `before` for the previous page
    next_after: int | None  # idx to pass as `after` for the next page


def episodes_page(
    store: Store,
    run_id: str,
    *,
    status: str | None = None,
    after: int | None = None,
    before: int | None = None,
    limit: int = EPISODES_PER_PAGE,
) -> EpisodesPage:
    """One page of a run's episodes in idx order, after `after` or before `before`."""
    # no final answers: an agent's answer can be megabytes, and the list does not show it
    q = select(Episode).where(Episode.run_id == run_id)
    q = q.options(defer(Episode.final_answer, raiseload=True))
    if status:
        q = q.where(Episode.status == status)
    backwards = before is not None and after is None
    if backwards:
        q = q.where(Episode.idx < before).order_by(Episode.idx.desc())
    else:
        if after is not None:
            q = q.where(Episode.idx > after)
        q = q.order_by(Episode.idx)
    eps = _rows(store, q.limit(limit + 1))
    more = len(eps) > limit
    eps = eps[:limit]
    if backwards:
        eps.reverse()
        has_prev, has_next = more, True
    else:
        has_prev, has_next = after is not None and after >= 0, more
    return EpisodesPage(
        eps,
        prev_before=eps[0].idx if eps and has_prev else None,
        next_after=eps[-1].idx if eps and has_next else None,
    )


def last_event_id(store: Store, run_id: str) -> int:
    """The newest event's id: live updates ask only for events after it."""
    with store.engine.connect() as conn:
        q = select(func.max(Event.id)).where(Event.run_id == run_id)
        return conn.execute(q).scalar() or 0
