"""A run's report: what the evaluator's report is built from (its episodes' summaries, with its
floor run's), and the report itself (`GET /runs/{id}/report`, `harness report`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from evaluator.api import EpisodeStats, EpisodeSummary, ScoreResult
from harness.runs.spec import EpochReducer, RunSpec, episode_epoch
from harness.store.models import Run
from harness.store.repo import Store, missing_scores


class ReportOut(BaseModel):
    run_id: str
    report: Any = Field(description="the evaluator's report (JSON)")
    text: str | None = Field(None, description="the report rendered as text, when it has one")
    floor_run_id: str | None = Field(
        None, description="the interpolation floor run whose episodes the report includes"
    )
    imported: bool = Field(
        False,
        description="the run was imported from a file (`harness import-inspect`): the scores "
        "are the file's claims, not measured by this server",
    )


def episode_summaries(store: Store, run: Run) -> list[EpisodeSummary]:
    """What the evaluator's report is built from (evaluator.api.EpisodeSummary)."""
    eps = store.episodes(run.id, with_answer=False)
    n_targets = len(run.target_ids)
    scores: dict[str, list[ScoreResult]] = {}
    for s in store.run_scores(run.id):
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
        )
        for e in eps
    ]


class ReportUnavailable(RuntimeError):
    """The evaluator's report module is not installed."""


def build_report(store: Store, run: Run, epoch_reducer: EpochReducer | None = None) -> ReportOut:
    """Calls evaluator.report.build_report(list[EpisodeSummary]) and makes its result JSON.
    `epoch_reducer`: reduce repeated samples another way than the run's spec says (the same
    episodes seen as mean, max or at-least-one, without running them again)."""
    try:
        from evaluator.report import build_report as evaluator_report  # type: ignore[import-not-found]
    except ImportError as e:
        raise ReportUnavailable(
            f"the evaluator's report module is not available ({e}); scores are at GET /runs/{run.id}"
        ) from e
    summaries = episode_summaries(store, run)
    floor = store.floor_run(run.id)
    if floor is not None:  # the interpolation floor (its summaries carry agent "interpolation")
        summaries += episode_summaries(store, floor)
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
        imported=bool(store.imported_runs([run.id])),
    )
