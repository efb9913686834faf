"""Runs with many episodes written straight into a SQLite store (for the pagination test and
benchmarks/web_pages.py): the shape of real rows, without running agents."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import create_engine, insert

from harness.store.models import Episode, Run, Score


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
