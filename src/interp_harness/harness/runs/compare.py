"""Runs compared on their shared targets (`harness compare RUN RUN...`, `GET /compare`, the
compare page): each run's summaries and its floor run's, handed to the evaluator's paired tests
(interp_harness.evaluator.compare)."""

from __future__ import annotations

from interp_harness.evaluator.compare import Comparison, RunSide, compare_runs
from interp_harness.harness.domain.run_config import config_label
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.runs.report import episode_summaries
from interp_harness.harness.store.models import Run
from interp_harness.harness.store.repo import Store


def run_side(store: Store, run: Run) -> RunSide:
    """One run of a comparison: its summaries, its floor run's, and their configurations."""
    spec = RunSpec.model_validate(run.spec)
    floor = store.runs.floor(run.id)
    return RunSide(
        run_id=run.id,
        agent=run.agent,
        config=config_label(spec),
        episodes=episode_summaries(store, run),
        floor=episode_summaries(store, floor) if floor is not None else [],
        floor_run_id=floor.id if floor is not None else None,
        floor_agent=floor.agent if floor is not None else None,
        floor_config=config_label(floor.spec) if floor is not None else None,
        reducer=spec.epoch_reducer,
    )


def build_comparison(store: Store, runs: list[Run]) -> Comparison:
    """Every pair of `runs` on the targets they share."""
    return compare_runs([run_side(store, r) for r in runs])
