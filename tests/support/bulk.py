"""Runs with many episodes written straight into a SQLite store (for the pagination test and
benchmarks/web_pages.py): the shape of real rows, without running agents."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import create_engine, insert

from interp_harness.harness.store.models import Episode, Run, Score


def insert_bulk_runs(db: Path, *, n_runs: int, n_episodes: int) -> str:
    """`n_runs` finished runs of agent `bulk-agent` dated 2001 (older than any real run); the
    newest has `n_episodes` scored numeric episodes. Returns that run's id."""
    engine = create_engine(f"sqlite:///{db}")
    t0 = datetime(2001, 1, 1, tzinfo=UTC)
    big = f"bulk{n_runs - 1:04d}"
    with engine.begin() as c:
        for i in range(n_runs):
            n = n_episodes if i == n_runs - 1 else 1
            when = t0 + timedelta(minutes=i)
            c.execute(
                insert(Run.__table__),
                {
                    "id": f"bulk{i:04d}", "created_at": when, "updated_at": when,
                    "status": "completed", "agent": "bulk-agent", "dataset": "find-gen",
                    "family": "numeric", "finished_at": when, "error": None,
                    "spec": {"agent": "bulk-agent", "dataset": "find-gen", "family": "numeric"},
                    "target_ids": [f"find-gen/numeric/s0/f{k:05d}" for k in range(n)],
                },
            )  # fmt: skip
            eps = [
                {
                    "id": f"b{i:04d}e{k:06d}", "run_id": f"bulk{i:04d}", "idx": k,
                    "target_id": f"find-gen/numeric/s0/f{k:05d}", "dataset": "find-gen",
                    "family": "numeric", "variant": "clean", "status": "completed",
                    "end_reason": "description", "exemplar_init": False, "rounds": 3,
                    "target_calls": 2, "inputs": 100 + k % 300, "prompt_tokens": 0,
                    "completion_tokens": 0, "cost_usd": 0.0, "active_s": 1.0, "scored": True,
                    "created_at": when, "started_at": when, "finished_at": when,
                }
                for k in range(n)
            ]  # fmt: skip
            c.execute(insert(Episode.__table__), eps)
            c.execute(
                insert(Score.__table__),
                [
                    {"episode_id": e["id"], "metric": "code_success", "value": float(k % 3 == 0),
                     "status": "ok", "details": {"parser": "tolerant"}, "created_at": when}
                    for k, e in enumerate(eps)
                ],
            )  # fmt: skip
    engine.dispose()
    return big


def insert_neuron_episode(db: Path, outputs: dict[str, str]) -> str:
    """A finished episode on a neuron target whose one call read `outputs` (text -> the runner's
    `tok(act) ... [max m]` line). Returns the episode id."""
    from interp_harness.harness.store.models import Message, TargetCall

    engine = create_engine(f"sqlite:///{db}")
    when = datetime(2001, 1, 1, tzinfo=UTC)
    tid = "neuron/smollm2/8:1413"
    with engine.begin() as c:
        c.execute(
            insert(Run.__table__),
            {
                "id": "neuronrun", "created_at": when, "updated_at": when,
                "status": "completed", "agent": "scripted-neuron", "dataset": "neuron",
                "family": "neurons", "finished_at": when, "error": None,
                "spec": {"agent": "scripted-neuron", "dataset": "neuron"}, "target_ids": [tid],
            },
        )  # fmt: skip
        c.execute(
            insert(Episode.__table__),
            {
                "id": "neuronep", "run_id": "neuronrun", "idx": 0, "target_id": tid,
                "dataset": "neuron", "family": "neurons", "variant": "smollm2",
                "status": "completed", "end_reason": "description", "exemplar_init": False,
                "rounds": 2, "target_calls": 1, "inputs": len(outputs), "prompt_tokens": 0,
                "completion_tokens": 0, "cost_usd": 0.0, "active_s": 1.0, "scored": True,
                "created_at": when, "started_at": when, "finished_at": when,
            },
        )  # fmt: skip
        cmd = "COMMAND: PYTHON(./temp/neuron.py " + " ".join(f'"{t}"' for t in outputs) + ")"
        c.execute(
            insert(Message.__table__),
            [
                {"episode_id": "neuronep", "step": 0, "role": "system", "content": "sys"},
                {"episode_id": "neuronep", "step": 1, "role": "assistant", "content": cmd},
            ],
        )
        c.execute(
            insert(TargetCall.__table__),
            {
                "episode_id": "neuronep", "step": 1, "idx": 0, "inputs": list(outputs),
                "outputs": [{"input": t, "output": o, "error": None} for t, o in outputs.items()],
                "n_errors": 0, "created_at": when,
            },
        )  # fmt: skip
    engine.dispose()
    return "neuronep"
