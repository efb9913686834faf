"""Admitting a run: its plan (harness/runs/plan.py), then the pre-flight checks on that plan
(harness/preflight.py), so that the agent is resolved and the targets selected once."""

from __future__ import annotations

from harness.policy import ApiPolicy
from harness.preflight import preflight as check
from harness.runs.catalogs import CatalogCache
from harness.runs.plan import RunPlan, plan_run
from harness.runs.selection import SelectionError
from harness.runs.spec import RunSpec
from harness.settings import Settings


def checked_plan(
    spec: RunSpec,
    settings: Settings,
    catalogs: CatalogCache,
    *,
    policy: ApiPolicy | None = None,
    preflight: bool = True,
) -> RunPlan:
    """The run's plan, then (with `preflight`) the pre-flight checks on it: PreflightError says
    every problem found when the run cannot work; SelectionError / RequestInvalid as
    `plan_run`."""
    try:
        plan = plan_run(spec, catalogs, policy=policy)
    except SelectionError:
        if preflight:  # says this problem with every other one found
            check(spec, settings, catalogs, policy=policy)
        raise
    if preflight:
        check(spec, settings, catalogs, policy=policy, plan=plan)
    return plan
