"""Admitting a run, in one step: `admit(spec) -> RunPlan`, the one entry of every path that
starts a run (`harness run` and `harness mcp run` in this process, `POST /runs` and the web form,
which posts to it; the tests' `create_run`).

It checks and plans the run once, in this order, each piece asked once:
1. the agent (harness/policy.py `chosen_agent`: what the caller may choose, the class, its
   options and provider profile), then what it can do in the spec's protocol mode;
2. the targets (harness/runs/selection.py `select_targets` on the catalog of the spec's
   find-gen seed) and the floor runs their records name (harness/runs/plan.py `plan_floors`);
3. where its episodes may run (an agent that meets its client in this process);
4. pre-flight (harness/runs/preflight.py `preflight`) on what 1 and 2 resolved.

A stored run is not admitted again when it resumes: its plan is read back
(harness/runs/prepare.py)."""

from __future__ import annotations

from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.domain.spec import CODE_MODES, TOOL_MODES, RunSpec
from interp_harness.harness.policy import ApiPolicy, chosen_agent
from interp_harness.harness.runs.plan import RunPlan, plan_floors, store_plan
from interp_harness.harness.runs.preflight import preflight as check
from interp_harness.harness.runs.selection import SelectionError, select_targets
from interp_harness.harness.settings import Settings
from interp_harness.harness.store.models import Run
from interp_harness.harness.store.repo import Store


def admit(
    spec: RunSpec,
    settings: Settings,
    catalogs: CatalogCache,
    *,
    policy: ApiPolicy | None = None,
    preflight: bool = True,
) -> RunPlan:
    """The run's plan, checked. `policy`: the REST API's (None: the operator's CLI).

    Raises RequestInvalid when `policy` refuses a field (the API's 422); with `preflight`,
    PreflightError naming every problem found (the request's own and the checks'); without,
    SelectionError for the first problem of the request. SelectionError too for an agent that
    cannot run where this process would run it."""
    agent_problem = selection_problem = None
    agent_cls = profile = None
    try:
        agent_cls, profile = chosen_agent(spec, policy)
        check_protocol_mode(spec, agent_cls)
    except SelectionError as e:
        if not preflight:
            raise
        agent_problem, agent_cls = str(e), None
    targets, floors = None, []
    try:
        # without pre-flight a refused agent ends here; with it, its selection is checked too
        targets = select_targets(spec, catalogs.get(spec.gen_seed))
        if agent_cls is not None:
            floors = plan_floors(spec, agent_cls, targets)
    except SelectionError as e:
        if not preflight:
            raise
        selection_problem = str(e)
    if agent_cls is not None and targets is not None and selection_problem is None:
        _check_in_orchestrator(spec, settings, agent_cls)
    if preflight:
        agent = (agent_cls, profile) if agent_cls is not None else None
        check(spec, settings, agent, targets, refused=(agent_problem, selection_problem))
    assert agent_cls is not None and targets is not None  # pre-flight raised otherwise
    return RunPlan(spec, agent_cls, profile, targets, floors)


def check_protocol_mode(spec: RunSpec, agent_cls: type) -> None:
    """SelectionError when the run's protocol mode asks what the agent cannot do: modes `tools`
    and `code-tools` need an agent whose `step` takes tools (`Agent.supports_tools`); an agent
    that writes lab cells (`Agent.needs_lab`) needs mode `code` or `code-tools`."""
    from interp_harness.agents.host_protocol import no_tools

    name = getattr(agent_cls, "name", "") or agent_cls.__qualname__
    mode = str(spec.protocol.mode)
    if mode in TOOL_MODES and not getattr(agent_cls, "supports_tools", False):
        raise SelectionError(no_tools(name))
    if getattr(agent_cls, "needs_lab", False) and mode not in CODE_MODES:
        raise SelectionError(
            f"agent {name!r} writes Python cells: use protocol mode 'code' or 'code-tools' "
            f"(--mode code), not {mode!r}"
        )


def _check_in_orchestrator(spec: RunSpec, settings: Settings, agent_cls: type) -> None:
    """An agent that meets its client in the orchestrator's process (`external`, over MCP) needs
    its episodes there, and tool calls to meet (protocol mode `tools`, or `code-tools`)."""
    if not getattr(agent_cls, "runs_in_orchestrator", False):
        return
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


def create_run(
    store: Store,
    spec: RunSpec,
    catalogs: CatalogCache,
    *,
    settings: Settings | None = None,
    policy: ApiPolicy | None = None,
    owner: str | None = None,
    lease_s: float | None = None,
) -> Run:
    """Admit a run without pre-flight and store it as queued (with its floor runs;
    `store_plan`): the tests' and scripts' way to start one in a store of their own."""
    plan = admit(spec, settings or Settings(), catalogs, policy=policy, preflight=False)
    return store_plan(store, plan, owner=owner, lease_s=lease_s)
