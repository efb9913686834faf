"""Compatibility names: the scheduler's jobs live in `harness.runs` (one module each) and the
wiring in `harness.services`. Importers may keep `from harness.scheduler import ...`."""

from harness.runs.catalogs import CatalogCache
from harness.runs.leases import FENCE, new_owner_id
from harness.runs.plan import RunPlan, create_run, floor_spec, plan_run
from harness.runs.scheduler import Scheduler
from harness.runs.selection import (
    SelectionError,
    resolve_agent_class,
    resolve_checked_agent,
    select_targets,
)
from harness.services import load_score_hook
from harness.target_client import make_target_client

__all__ = [
    "FENCE",
    "CatalogCache",
    "RunPlan",
    "Scheduler",
    "SelectionError",
    "create_run",
    "floor_spec",
    "load_score_hook",
    "make_target_client",
    "new_owner_id",
    "plan_run",
    "resolve_agent_class",
    "resolve_checked_agent",
    "select_targets",
]
