"""The evaluator's contract with the orchestrator: what a scored episode produces and consumes."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

ErrorCategory = Literal["agent", "target", "judge", "infrastructure", "budget", "sandbox"]


class ScoreResult(BaseModel):
    """One metric of one episode. An error is a state (status="error"), never a value of 0."""

    metric: str  # e.g. "nmse", "code_success", "string_exact", "unit_test", "domain_iou"
    value: float | None = None
    status: Literal["ok", "error"] = "ok"
    error_category: ErrorCategory | None = None
    error: str | None = None
    details: dict[str, Any] = Field(
        default_factory=dict
    )  # parser used, judge model id, raw replies...


class EpisodeStats(BaseModel):
    """How much the agent used; every score is reported next to it."""

    target_calls: int = 0
    inputs: int = 0
    rounds: int = 0
    exemplar_init: bool = False


class EpisodeSummary(BaseModel):
    """What reports are built from (one per episode)."""

    episode_id: str
    target_id: str
    dataset: str
    family: str
    variant: str
    agent: str
    status: str  # completed | error | budget_exhausted | ...
    error_category: str | None = None
    error: str | None = None  # the episode's error message (status "error")
    stats: EpisodeStats = Field(default_factory=EpisodeStats)
    scores: list[ScoreResult] = Field(default_factory=list)
    # which repeated sample of its target this episode is (a run with epochs > 1): reports
    # reduce a target's epochs to one score before averaging over targets
    epoch: int = 0
    # the run it belongs to: reports give each run rows of its own (two runs of one agent on the
    # same targets are two configurations, never one pooled sample), headed by `config` (its
    # protocol mode and options); a floor run names the run it is the floor of
    run_id: str = ""
    config: str = ""
    floor_of: str | None = None
