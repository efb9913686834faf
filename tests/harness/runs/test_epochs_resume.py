"""A run with epochs lays out its episodes as idx = epoch * n_targets + i, keyed by (run, idx)
like any run's: a scheduler that resumes it after a crash (some episodes stored, some run) adds
only the missing ones and keeps those it has. Real SQLite store, find-gen catalog."""

from __future__ import annotations

import asyncio
from pathlib import Path

from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.runs.admission import create_run
from interp_harness.harness.runs.prepare import load_run, store_episodes
from interp_harness.harness.store.repo import open_store

IDS = ["find-gen/numeric/s0/f00002", "find-gen/numeric/s0/f00005"]


def test_resumed_epochs_run_adds_only_missing_episodes(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'h.db'}")
    cats = CatalogCache()
    spec = {"agent": "interpolation", "dataset": "find-gen", "ids": IDS, "epochs": 3}
    run = create_run(store, RunSpec.model_validate(spec), cats)
    assert store.runs.floor(run.id) is None  # interpolation is its own floor
    # the crash: only the first epoch's episodes were stored, and the first of them ran
    store.episodes.ensure(
        run.id,
        [
            {"idx": i, "target_id": t, "dataset": "find-gen", "family": "numeric", "variant": v}
            for i, (t, v) in enumerate(zip(IDS, ("clean", "clean"), strict=True))
        ],
    )
    first = store.episodes.of_run(run.id)[0]
    store.episodes.start(first.id, run.id)
    store.episodes.finish(first.id, run.id, status="completed", end_reason="description")

    rs = asyncio.run(load_run(store, cats, run))
    for _ in range(2):  # twice: a second resume changes nothing
        store_episodes(store, run, rs)
    eps = store.episodes.of_run(run.id)
    assert [(e.idx, e.target_id) for e in eps] == [(i, IDS[i % 2]) for i in range(6)]
    assert eps[0].id == first.id and eps[0].status == "completed"
    assert [e.status for e in eps[1:]] == ["queued"] * 5


def test_floor_of_an_epochs_run_has_one_epoch(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'h.db'}")
    spec = {"agent": "orch_agents:ProbeAgent", "dataset": "find-gen", "ids": IDS, "epochs": 4}
    run = create_run(store, RunSpec.model_validate(spec), CatalogCache())
    floor = store.runs.floor(run.id)
    assert floor is not None and floor.agent == "interpolation"
    assert (run.spec["epochs"], floor.spec["epochs"]) == (4, 1)
