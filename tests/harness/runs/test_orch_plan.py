"""A run's plan (agent class, targets, floor runs) is made once when the run is created, stored
with it, and read back by the scheduler: the agent is not resolved again, the targets not
selected again. Floor runs come from the benchmark records' `floors`."""

from __future__ import annotations

import asyncio

import pytest
from support.orch_helpers import run_in_process

import interp_harness.harness.policy as policy
import interp_harness.harness.runs.admission as admission
import interp_harness.harness.runs.plan as plan_mod
from interp_harness.function_store.benchmark import benchmark
from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.runs.admission import admit, create_run
from interp_harness.harness.runs.plan import PLAN_EVENT, stored_agent_path
from interp_harness.harness.settings import Settings
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

V1_NUMERIC = ["find-v1/numeric/f00150", "find-v1/numeric/f00153"]
SCRIPTED = "orch_agents:ProbeAgent"


def _count(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[str]:
    calls: list[str] = []
    real = getattr(module, name)

    def counted(*a, **kw):  # type: ignore[no-untyped-def]
        calls.append(str(a[0]) if a else "")
        return real(*a, **kw)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_the_plan_is_stored_and_read_back(db_url: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    spec = {"agent": SCRIPTED, "dataset": "find-v1", "ids": V1_NUMERIC}
    resolved = _count(monkeypatch, plan_mod, "resolve_agent_class")
    checked = _count(monkeypatch, admission, "chosen_agent")
    selected = _count(monkeypatch, admission, "select_targets")
    also_resolved = _count(monkeypatch, policy, "resolve_agent_class")
    store, (run,) = asyncio.run(run_in_process(db_url, spec))
    assert run.status == "completed", run.error
    # one resolution of the agent (and of each floor agent), one selection: at admission only
    assert len(checked) == 1 and len(selected) == 1
    floors = benchmark("numeric").floors
    assert sorted(resolved) == sorted(floors)
    assert len(also_resolved) == 1  # the agent's own, inside chosen_agent
    assert stored_agent_path(store, run.id) == "orch_agents:ProbeAgent"
    floor = store.runs.floor(run.id)
    assert floor is not None and floor.agent in floors and floor.target_ids == V1_NUMERIC
    assert stored_agent_path(store, floor.id) is not None
    assert [e.kind for e in store.events.of_run(run.id)].count(PLAN_EVENT) == 1


def _plan(spec: RunSpec, cats: CatalogCache) -> plan_mod.RunPlan:
    return admit(spec, Settings(), cats, preflight=False)


def test_floors_come_from_the_records(sqlite_url: str) -> None:
    """Only targets whose benchmark names a floor agent get one; a floor agent gets none."""
    store = Store(make_engine(sqlite_url))
    cats = CatalogCache()
    mixed = ["find-gen/numeric/s0/f00000", "find-gen/strings/s0/f00000"]
    plan = _plan(
        RunSpec.model_validate({"agent": SCRIPTED, "dataset": "find-gen", "ids": mixed}), cats
    )
    want = {
        f: [t.id for t in plan.targets if f in benchmark(t.family).floors]
        for f in benchmark("numeric").floors
    }
    assert {f.agent: f.target_ids for f in plan.floors} == want
    for f in plan.floors:
        floor_spec = RunSpec.model_validate({"agent": f.agent, "dataset": "find-gen", "ids": mixed})
        assert _plan(floor_spec, cats).floors == []
    no_floor = RunSpec.model_validate(
        {"agent": SCRIPTED, "dataset": "find-gen", "ids": mixed, "floor": False}
    )
    run = create_run(store, no_floor, cats)
    assert store.runs.floor(run.id) is None


def test_a_run_stored_without_a_plan_resolves_its_agent(sqlite_url: str) -> None:
    """Runs stored before plans were (no plan event) still start: the agent's name is resolved."""
    from support.orch_helpers import resume_in_process

    store = Store(make_engine(sqlite_url))
    spec = RunSpec.model_validate(
        {"agent": SCRIPTED, "dataset": "find-v1", "ids": V1_NUMERIC[:1], "floor": False}
    )
    run = store.runs.create(spec, V1_NUMERIC[:1])
    assert stored_agent_path(store, run.id) is None
    done = asyncio.run(resume_in_process(store, run.id))
    assert done.status == "completed", done.error
