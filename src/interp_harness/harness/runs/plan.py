"""A run's plan: its agent class, its targets and its floor runs, computed once when the run is
admitted (harness/runs/admission.py `admit`), stored with it (`store_plan`), and read back by
whoever executes its episodes.

Stored parts: the targets are the run's `target_ids`; each floor run is a run of its own linked
by a "floor_run" event; the agent class's import path is the run's "plan" event, so that the
scheduler and the Ray workers import that class instead of resolving the agent's name again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from interp_harness.function_store.benchmark import UnknownFamily, benchmark
from interp_harness.function_store.models import Target
from interp_harness.harness.domain.agent_class import resolve_agent_class
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.domain.tool_checks import call_bounds
from interp_harness.harness.providers.profiles import ProviderProfile
from interp_harness.harness.store.models import Run
from interp_harness.harness.store.repo import Store

PLAN_EVENT = "plan"


@dataclass(frozen=True)
class FloorPlan:
    """A floor agent run beside the agent on the targets whose benchmark names it."""

    agent: str
    agent_cls: type
    target_ids: list[str]


@dataclass(frozen=True)
class RunPlan:
    """An admitted run (made only by `admit`): what it runs, checked."""

    spec: RunSpec
    agent_cls: type
    profile: ProviderProfile | None  # where the agent's endpoint and key come from
    targets: list[Target]
    floors: list[FloorPlan] = field(default_factory=list)


def agent_path(cls: type) -> str | None:
    """`module:Qualname`, or None for a class no other process can import by path."""
    if cls.__module__ == "__main__" or "<locals>" in cls.__qualname__:
        return None
    return f"{cls.__module__}:{cls.__qualname__}"


def _floors_of(target: Target) -> tuple[str, ...]:
    try:
        return benchmark(target.family).floors
    except UnknownFamily:
        return ()


def plan_floors(spec: RunSpec, agent_cls: type, targets: list[Target]) -> list[FloorPlan]:
    """With `spec.floor` (the default), one floor run per floor agent the selected targets'
    benchmarks name, on exactly those targets; none for a floor agent itself."""
    if not spec.floor:
        return []
    by_agent: dict[str, list[str]] = {}
    for t in targets:
        for floor in _floors_of(t):
            by_agent.setdefault(floor, []).append(t.id)
    name = getattr(agent_cls, "name", None)
    return [
        FloorPlan(floor, resolve_agent_class(floor), ids)
        for floor, ids in by_agent.items()
        if floor not in (spec.agent, name)
    ]


def floor_options(spec: RunSpec, agent_cls: type | None) -> dict[str, Any]:
    """The floor agent's options for `spec`: matched to the run's input budget
    (`budgets.max_inputs`, set by whoever starts the run: the API caller or `harness run
    --max-inputs`) when the floor agent takes one (an `Options` field `max_inputs`, as the
    interpolation agent's grid), in calls of at most the target service's inputs per call;
    else its defaults (the interpolation agent: 129 grid points in one call)."""
    budget = spec.budgets.max_inputs
    fields = getattr(getattr(agent_cls, "Options", None), "model_fields", {})
    if budget is None or "max_inputs" not in fields:
        return {}
    n = max(2, budget)  # an interpolation needs two points
    options: dict[str, Any] = {"max_inputs": n}
    if "batch_size" in fields:
        options["batch_size"] = min(n, call_bounds()[0])
    return options


def floor_spec(
    spec: RunSpec,
    target_ids: list[str],
    run_id: str,
    agent: str,
    family: str | None = None,
    options: dict[str, Any] | None = None,
) -> RunSpec:
    """A floor's spec for `spec`: same dataset, find-gen seed, protocol and budgets; `family`:
    its targets' family when they have one (the runs list shows it; the ids select them);
    `options`: the floor agent's (`floor_options`: its input budget matched to the run's).

    One epoch whatever the run's."""
    return spec.model_copy(
        update={
            "agent": agent,
            "agent_options": dict(options or {}),
            "family": family,
            "variant": None,
            "ids": list(target_ids),
            "limit": None,
            "seed": None,
            "floor": False,
            "floor_for": run_id,
            # floor agents are deterministic: repeating them would only repeat the same scores
            "epochs": 1,
        },
        deep=True,
    )


def store_plan(
    store: Store,
    plan: RunPlan,
    *,
    owner: str | None = None,
    lease_s: float | None = None,
    created_by: str | None = None,
) -> Run:
    """Store the planned run as queued, and its floor runs, linked both ways: a floor's spec
    has floor_for=<the run's id>, and the run has a "floor_run" event naming it
    (`store.runs.floor`). With `owner`, every run is stored already claimed by that scheduler for
    `lease_s` seconds, so that no other process sharing the store starts it first.
    `created_by`: the hash of the API token that started them (Run.created_by)."""
    ids = [t.id for t in plan.targets]
    run = store.runs.create(plan.spec, ids, owner=owner, lease_s=lease_s, created_by=created_by)
    store.events.add(run.id, PLAN_EVENT, {"agent_class": agent_path(plan.agent_cls)})
    for f in plan.floors:
        chosen = set(f.target_ids)
        families = {t.family for t in plan.targets if t.id in chosen}
        family = families.pop() if len(families) == 1 else None
        options = floor_options(plan.spec, f.agent_cls)
        spec = floor_spec(plan.spec, f.target_ids, run.id, f.agent, family, options)
        floor = store.runs.create(
            spec, f.target_ids, owner=owner, lease_s=lease_s, created_by=created_by
        )
        store.events.add(floor.id, PLAN_EVENT, {"agent_class": agent_path(f.agent_cls)})
        store.events.add(run.id, "floor_run", {"run_id": floor.id})
    return run


def stored_agent_path(store: Store, run_id: str) -> str | None:
    data = store.events.first_data(run_id, PLAN_EVENT)
    return data.get("agent_class") if data else None
