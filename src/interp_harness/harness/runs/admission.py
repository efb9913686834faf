"""Admitting a run: its plan (harness/runs/plan.py), then the pre-flight checks on that plan
(harness/runs/preflight.py), so that the agent is resolved and the targets selected once."""

from __future__ import annotations

from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.domain.spec import TOOL_MODES, RunSpec
from interp_harness.harness.policy import ApiPolicy
from interp_harness.harness.runs.plan import RunPlan, plan_run
from interp_harness.harness.runs.preflight import preflight as check
from interp_harness.harness.runs.selection import SelectionError
from interp_harness.harness.settings import Settings


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
    if getattr(plan.agent_cls, "runs_in_orchestrator", False):
        _check_in_orchestrator(spec, settings)
    if preflight:
        check(spec, settings, catalogs, policy=policy, plan=plan)
    return plan


def _check_in_orchestrator(spec: RunSpec, settings: Settings) -> None:
    """An agent that meets its client in the orchestrator's process (`external`, over MCP) needs
    its episodes there, and tool calls to meet (protocol mode `tools`, or `code-tools`)."""
    if settings.executor != "local":
        raise SelectionError(
            f"agent {spec.agent!r} runs in the orchestrator's process (its clients reach it over "
            f"MCP there): it needs the local executor, not {settings.executor!r}"
        )
    if spec.protocol.mode not in TOOL_MODES:  # code-tools: the tools and the lab's run_python
        raise SelectionError(
            f"agent {spec.agent!r} calls tools: use protocol mode 'tools' (--mode tools) or "
            f"'code-tools', not {spec.protocol.mode!r}"
        )
