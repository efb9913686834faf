"""Stores for the CLI tests, written through the store's own API (the rows a run leaves): the
main job's four runs (scripts/main_job.sh: the scripted agents on numeric, strings, entities and
relations, with the interpolation floor), with the scores the evaluator stores for them."""

from __future__ import annotations

import os
import subprocess
from typing import Any

from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.store.repo import Store, open_store
from support import ROOT, run_cli

# per family: (agent, [(metric, value per episode)...]); ceilings near chance for strings, as
# the project's small judge gives in the main job
CEIL_OK = {"verdicts": [1, 1, 1, 0, 1, 1, 1, 1, 0, 1]}
MAIN_JOB: dict[str, tuple[str, list[dict[str, float | None]]]] = {
    "numeric": (
        "scripted-numeric",
        [{"code_success": v, "domain_iou": None} for v in (1.0, 0.0, 1.0, 1.0)],
    ),
    "strings": (
        "scripted-strings",
        [
            {
                "string_exact": v,
                "string_exact_find": v,
                "unit_test": u,
                "unit_test_strict": u,
                "unit_test_ceiling": 0.4,
                "unit_test_ceiling_strict": 0.4,
            }
            for v, u in ((1.0, 0.3), (0.0, 0.4), (1.0, 0.5), (0.0, 0.2))
        ],
    ),
    "entities": (
        "scripted-entities",
        [
            {"unit_test": u, "unit_test_strict": u, "unit_test_ceiling": 0.8}
            for u in (0.5, 0.7, 0.6)
        ],
    ),
    "relations": (
        "scripted-relations",
        [
            {"unit_test": u, "unit_test_strict": u, "unit_test_ceiling": 0.8}
            for u in (0.4, 0.6, 0.9)
        ],
    ),
}


def add_run(
    store: Store,
    agent: str,
    family: str,
    episodes: list[dict[str, float | None]],
    *,
    floor_for: str | None = None,
    error_episode: bool = False,
    inputs: int = 40,
) -> str:
    """A completed run of `agent` on find-gen `family` with one episode per score dict."""
    spec = RunSpec.model_validate(
        {"agent": agent, "dataset": "find-gen", "family": family, "floor_for": floor_for}
    )
    n = len(episodes) + (1 if error_episode else 0)
    tids = [f"find-gen/{family}/f{i:05d}" for i in range(n)]
    run = store.runs.create(spec, tids)
    store.episodes.ensure(
        run.id,
        [
            {"idx": i, "target_id": t, "dataset": "find-gen", "family": family, "variant": "clean"}
            for i, t in enumerate(tids)
        ],
    )
    for ep, scores in zip(store.episodes.of_run(run.id), [*episodes, None], strict=False):
        store.episodes.start(ep.id, run.id)
        if scores is None:  # the error episode: a state with a category, never a score
            store.episodes.finish(
                ep.id,
                run.id,
                status="error",
                end_reason="error",
                error_category="infrastructure",
                error="target service did not answer within 120 s (find-gen/" + family + ")",
            )
            continue
        store.episodes.update(ep.id, rounds=3, target_calls=4, inputs=inputs)
        store.episodes.finish(ep.id, run.id, status="completed", end_reason="description")
        rows: list[dict[str, Any]] = []
        for metric, value in scores.items():
            details = CEIL_OK if metric.startswith("unit_test_ceiling") else {}
            if metric == "domain_iou":
                details = {"outcome": "not corrupted"}
            rows.append({"metric": metric, "value": value, "status": "ok", "details": details})
        store.scores.save(ep.id, rows)
    store.runs.set_status(run.id, "completed")
    return run.id


def main_job_store(url: str, repeat: int = 1) -> list[str]:
    """The main job's four runs (numeric with its interpolation floor), ids in family order;
    each family's episodes `repeat` times over."""
    store = open_store(url)
    ids = []
    for family, (agent, episodes) in MAIN_JOB.items():
        rid = add_run(store, agent, family, episodes * repeat, error_episode=True)
        if family == "numeric":
            floor = add_run(
                store,
                "interpolation",
                family,
                [{"code_success": v} for v in (1.0, 0.0, 0.0, 1.0)],
                floor_for=rid,
                inputs=129,
            )
            store.events.add(rid, "floor_run", {"run_id": floor})
        ids.append(rid)
    return ids


def harness_env(url: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"DATABASE_URL": url, "PYTHONPATH": str(ROOT)}, **extra)
    return env


def harness(url: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`harness ARGS` on the store at `url`, run by this process (support.run_cli)."""
    return run_cli(list(args), harness_env(url, **env), ROOT)
