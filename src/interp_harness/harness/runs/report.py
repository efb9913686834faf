"""A run's report: what the evaluator's report is built from (its episodes' summaries, with its
floor run's), and the report itself (`GET /runs/{id}/report`, `harness report`); one report of
several runs (`harness report RUN RUN...`, the main job's last step)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from interp_harness.evaluator.api import EpisodeStats, EpisodeSummary, ScoreResult
from interp_harness.harness.domain.run_config import config_label
from interp_harness.harness.domain.spec import EpochReducer, RunSpec, episode_epoch
from interp_harness.harness.store.models import Run
from interp_harness.harness.store.repo import Store
from interp_harness.harness.store.scores import missing_scores


class ReportOut(BaseModel):
    run_id: str
    report: Any = Field(description="the evaluator's report (JSON)")
    text: str | None = Field(None, description="the report rendered as text, when it has one")
    floor_run_id: str | None = Field(
        None,
        description="the floor run (the benchmark's floor agent on the same targets) whose episodes "
        "the report includes",
    )
    imported: bool = Field(
        False,
        description="the run was imported from a file (`harness import-inspect`): the scores "
        "are the file's claims, not measured by this server",
    )


def episode_summaries(store: Store, run: Run) -> list[EpisodeSummary]:
    """What the evaluator's report is built from (interp_harness.evaluator.api.EpisodeSummary)."""
    eps = store.episodes.of_run(run.id, with_answer=False)
    n_targets = len(run.target_ids)
    spec = RunSpec.model_validate(run.spec)
    scores: dict[str, list[ScoreResult]] = {}
    for s in store.scores.of_run(run.id):
        scores.setdefault(s.episode_id, []).append(
            ScoreResult(
                metric=s.metric,
                value=s.value,
                status=s.status,  # type: ignore[arg-type]
                error_category=s.error_category,  # type: ignore[arg-type]
                error=s.error,
                details=s.details,
            )
        )
    return [
        EpisodeSummary(
            episode_id=e.id,
            target_id=e.target_id,
            dataset=e.dataset,
            family=e.family,
            variant=e.variant,
            agent=run.agent,
            status=e.status,
            error_category=e.error_category,
            error=e.error,
            stats=EpisodeStats(
                target_calls=e.target_calls,
                inputs=e.inputs,
                rounds=e.rounds,
                exemplar_init=e.exemplar_init,
            ),
            scores=scores.get(e.id)
            or [ScoreResult.model_validate(m) for m in [missing_scores(e, 0, run.status)] if m],
            epoch=episode_epoch(e.idx, n_targets),
            run_id=run.id,
            config=config_label(spec),
            floor_of=spec.floor_for,
        )
        for e in eps
    ]


class ReportUnavailable(RuntimeError):
    """The evaluator's report module is not installed."""


class CombinedReportOut(BaseModel):
    """One report of several runs, each with its floor run (`harness report RUN RUN...`)."""

    run_ids: list[str]
    floor_run_ids: list[str]
    report: Any = Field(description="the evaluator's report (JSON)")
    imported: list[str] = Field(
        default_factory=list, description="the runs imported from a file (their scores are claims)"
    )
    judge_wall_s: float = Field(0.0, description="judge time over the episodes it scored")
    judged_episodes: int = 0


def _evaluator_report(run_id: str) -> Any:
    try:
        from interp_harness.evaluator.report import build_report as evaluator_report  # type: ignore[import-not-found]
    except ImportError as e:
        raise ReportUnavailable(
            f"the evaluator's report module is not available ({e}); scores are at GET /runs/{run_id}"
        ) from e
    return evaluator_report


def with_floor(store: Store, run: Run) -> tuple[list[EpisodeSummary], Run | None]:
    """The run's summaries, then its floor run's (their summaries carry the floor's agent)."""
    summaries = episode_summaries(store, run)
    floor = store.runs.floor(run.id)
    if floor is not None:
        summaries += episode_summaries(store, floor)
    return summaries, floor


def build_combined_report(
    store: Store, runs: list[Run], epoch_reducer: EpochReducer | None = None
) -> CombinedReportOut:
    """One evaluator report over several runs and their floor runs. Repeated samples are reduced
    with `epoch_reducer`, else the runs' own reducer when they agree, else by the mean."""
    evaluator_report = _evaluator_report(runs[0].id)
    summaries: list[EpisodeSummary] = []
    floors: list[str] = []
    for run in runs:
        more, floor = with_floor(store, run)
        summaries += more
        floors += [floor.id] if floor else []
    own = {RunSpec.model_validate(r.spec).epoch_reducer for r in runs}
    reducer = epoch_reducer or (own.pop() if len(own) == 1 else "mean")
    result = evaluator_report(summaries, reducer)
    # an episode's judge time is on each score its judge calls gave: counted once per episode
    judged = [
        max(float(s.details["judge_wall_s"]) for s in timed)
        for ep in summaries
        if (timed := [s for s in ep.scores if "judge_wall_s" in s.details])
    ]
    return CombinedReportOut(
        run_ids=[r.id for r in runs],
        floor_run_ids=floors,
        report=result.model_dump(mode="json") if isinstance(result, BaseModel) else result,
        imported=sorted(store.events.imported_runs([r.id for r in runs])),
        judge_wall_s=round(sum(judged), 3),
        judged_episodes=len(judged),
    )


def build_report(store: Store, run: Run, epoch_reducer: EpochReducer | None = None) -> ReportOut:
    """Calls interp_harness.evaluator.report.build_report(list[EpisodeSummary]) and makes its result JSON.
    `epoch_reducer`: reduce repeated samples another way than the run's spec says (the same
    episodes seen as mean, max or at-least-one, without running them again)."""
    evaluator_report = _evaluator_report(run.id)
    summaries, floor = with_floor(store, run)
    reducer = epoch_reducer or RunSpec.model_validate(run.spec).epoch_reducer
    result = evaluator_report(summaries, reducer)
    text = None
    if isinstance(result, BaseModel):
        render = getattr(result, "render", None) or getattr(result, "to_text", None)
        text = render() if callable(render) else None
        payload: Any = result.model_dump(mode="json")
    elif isinstance(result, str):
        payload, text = None, result
    else:
        payload = result
    return ReportOut(
        run_id=run.id,
        report=payload,
        text=text,
        floor_run_id=floor.id if floor else None,
        imported=bool(store.events.imported_runs([run.id])),
    )
