"""The interpolation floor: a run with numeric targets gets a second run, agent `interpolation`, on
exactly its numeric targets; it is executed with the run and the run's report shows both agents.

Real runs: in-process scheduler, SQLite, the in-process target client on find-v1 / find-gen."""

from __future__ import annotations

from support.orch_helpers import run_in_process

from interp_harness.harness.api.schemas import build_report, run_detail
from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.runs.admission import create_run
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

# find-v1 numeric clean targets (released data; find-v1 strings need HARNESS_FIND_ROOT, so the
# numeric/strings mix below uses find-gen, whose strings functions are generated here)
V1_NUMERIC = ["find-v1/numeric/f00150", "find-v1/numeric/f00153"]
GEN_NUMERIC = "find-gen/numeric/s0/f00000"
GEN_STRINGS = "find-gen/strings/s0/f00000"


def _spec(agent: str, dataset: str, ids: list[str], **kw) -> dict:  # type: ignore[no-untyped-def]
    return {"agent": agent, "dataset": dataset, "ids": ids, **kw}


def _floor_of(store: Store, run_id: str):  # type: ignore[no-untyped-def]
    floor = store.runs.floor(run_id)
    assert floor is not None, "no floor run was created"
    return floor


async def _run_with_floor(url: str, spec: dict):  # type: ignore[no-untyped-def]
    """Store the run, then run it and its floor with one in-process scheduler (as `harness run`
    does) under the evaluator's real scoring; returns (store, run, floor)."""
    from interp_harness.harness.episode.runner import default_score_hook
    from interp_harness.harness.runs.scheduler import Scheduler
    from interp_harness.harness.settings import Settings
    from interp_harness.harness.target_client import make_target_client

    store = Store(make_engine(url))
    cfg = Settings(sandbox="inprocess", poll_interval_s=0.05)
    cats = CatalogCache()
    run = create_run(store, RunSpec.model_validate(spec), cats)
    floor = _floor_of(store, run.id)
    hook = default_score_hook()
    assert hook is not None, "the evaluator's score_episode is part of this repository"
    sched = Scheduler(
        store,
        make_target_client(cfg, cats),
        settings=cfg,
        catalogs=cats,
        score_hook=hook,
        only_runs={run.id, floor.id},
    )
    sched.start()
    try:
        run = await sched.wait_run(run.id, poll_s=0.05)
        floor = await sched.wait_run(floor.id, poll_s=0.05)
    finally:
        await sched.stop()
    return store, run, floor


async def test_floor_runs_with_the_run_and_is_in_its_report(sqlite_url: str) -> None:
    spec = _spec("scripted-numeric", "find-v1", V1_NUMERIC, budgets={"max_rounds": 8})
    store, run, floor = await _run_with_floor(sqlite_url, spec)
    assert run.status == "completed" and floor.status == "completed"
    assert floor.agent == "interpolation"
    assert floor.target_ids == V1_NUMERIC
    fspec = RunSpec.model_validate(floor.spec)
    assert (fspec.floor, fspec.floor_for, fspec.dataset) == (False, run.id, "find-v1")
    assert fspec.budgets.max_rounds == 8 and fspec.agent_options == {}
    eps = store.episodes.of_run(floor.id)
    assert [e.target_id for e in eps] == V1_NUMERIC
    # the interpolation agent sends its default 129-point grid in one call, then answers
    assert all((e.status, e.target_calls, e.inputs) == ("completed", 1, 129) for e in eps)

    rep = build_report(store, store.runs.get(run.id))
    assert rep.floor_run_id == floor.id
    report = rep.report
    assert {r["agent"] for r in report["rows"]} == {"scripted-numeric", "interpolation"}
    assert {q["agent"] for q in report["queries"]} == {"scripted-numeric", "interpolation"}
    floor_q = [q for q in report["queries"] if q["agent"] == "interpolation"]
    assert sum(q["episodes"] for q in floor_q) == 2
    assert all(q["mean_inputs"] == 129 for q in floor_q)
    # the floor's answers went through the evaluator's code scoring (scored, not error states)
    [floor_row] = [
        r for r in report["rows"] if r["agent"] == "interpolation" and r["metric"] == "code_success"
    ]
    assert (floor_row["episodes"], floor_row["scored"]) == (2, 2)
    assert all(q["success"] is not None for q in floor_q)
    assert not any("no `interpolation` baseline" in n for n in report["notes"])
    assert run_detail(store, store.runs.get(run.id)).floor_run_id == floor.id


async def test_floor_takes_the_numeric_targets_only(sqlite_url: str) -> None:
    store = Store(make_engine(sqlite_url))
    spec = RunSpec.model_validate(
        _spec("scripted-numeric", "find-gen", [GEN_STRINGS, GEN_NUMERIC], budgets={"max_rounds": 3})
    )
    run = create_run(store, spec, CatalogCache())
    assert run.target_ids == [GEN_STRINGS, GEN_NUMERIC]
    floor = _floor_of(store, run.id)
    assert floor.target_ids == [GEN_NUMERIC]
    fspec = RunSpec.model_validate(floor.spec)
    assert (fspec.dataset, fspec.gen_seed, fspec.floor_for) == ("find-gen", 0, run.id)
    assert fspec.budgets == spec.budgets and fspec.protocol == spec.protocol
    # listed, and marked as a floor run in its spec
    listed = {r.id: r for r in store.runs.latest()}
    assert set(listed) == {run.id, floor.id}
    assert listed[floor.id].spec["floor_for"] == run.id and listed[run.id].spec["floor_for"] is None


async def test_no_floor_when_switched_off_or_without_numeric_targets(sqlite_url: str) -> None:
    store = Store(make_engine(sqlite_url))
    cats = CatalogCache()
    off = create_run(
        store,
        RunSpec.model_validate(_spec("scripted-numeric", "find-v1", V1_NUMERIC, floor=False)),
        cats,
    )
    strings_only = create_run(
        store, RunSpec.model_validate(_spec("scripted-numeric", "find-gen", [GEN_STRINGS])), cats
    )
    assert store.runs.floor(off.id) is None and store.runs.floor(strings_only.id) is None
    assert {r.id for r in store.runs.latest()} == {off.id, strings_only.id}


async def test_an_interpolation_run_has_no_floor(sqlite_url: str) -> None:
    store, [run] = await run_in_process(
        sqlite_url, _spec("interpolation", "find-v1", V1_NUMERIC[:1]), hook=None
    )
    assert run.status == "completed"
    assert store.runs.floor(run.id) is None
    assert [r.id for r in store.runs.latest()] == [run.id]


async def test_cancelling_the_run_cancels_its_floor(sqlite_url: str) -> None:
    from interp_harness.harness.runs.scheduler import Scheduler
    from interp_harness.harness.settings import Settings
    from interp_harness.harness.target_client import make_target_client

    store = Store(make_engine(sqlite_url))
    cfg = Settings(sandbox="inprocess", poll_interval_s=0.05)
    cats = CatalogCache()
    run = create_run(
        store, RunSpec.model_validate(_spec("scripted-numeric", "find-v1", V1_NUMERIC)), cats
    )
    floor = _floor_of(store, run.id)
    sched = Scheduler(store, make_target_client(cfg, cats), settings=cfg, catalogs=cats)
    # not started: both runs are queued, and cancelling the run cancels both
    assert sched.cancel_run(run.id)
    assert store.runs.get(run.id).status == "cancelled"
    assert store.runs.get(floor.id).status == "cancelled"


async def test_the_floor_samples_the_runs_input_budget(sqlite_url: str) -> None:
    """Issue 50 item 5: the floor used 129 inputs whatever the agent's budget. With
    `budgets.max_inputs`, the agent's calls stop at the budget (a call past it is refused and the
    agent told) and the interpolation floor samples that many points."""
    spec = _spec(
        "scripted-numeric", "find-v1", V1_NUMERIC[:1],
        agent_options={"max_inputs_per_call": 40}, budgets={"max_rounds": 8, "max_inputs": 64},
    )  # fmt: skip
    store, run, floor = await _run_with_floor(sqlite_url, spec)
    fspec = RunSpec.model_validate(floor.spec)
    assert fspec.agent_options == {"max_inputs": 64, "batch_size": 64}
    [fep] = store.episodes.of_run(floor.id)
    assert (fep.status, fep.target_calls, fep.inputs) == ("completed", 1, 64)
    [ep] = store.episodes.of_run(run.id)
    # its calls of up to 40 inputs ran while they fitted; the next one was refused, and said so
    assert 40 <= ep.inputs <= 64
    said = [m.content for m in store.episodes.messages(ep.id) if m.role == "user"]
    assert any(
        f"input budget: {ep.inputs} of 64 inputs used (budgets.max_inputs)" in m for m in said
    )
