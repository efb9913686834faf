"""The SQL store on SQLite (WAL) and on a real PostgreSQL server: migrations, idempotency keys."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError

from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.store import current_revision, make_engine, upgrade_schema
from interp_harness.harness.store.repo import Store

TABLES = {
    "runs",
    "episodes",
    "messages",
    "target_calls",
    "tool_calls",
    "lab_cells",
    "lab_figures",
    "scores",
    "events",
    "alembic_version",
}


def _episode(store: Store) -> tuple[str, str]:
    run = store.runs.create(RunSpec(agent="x", dataset="orch-test"), ["orch-test/numeric/f00000"])
    store.episodes.ensure(
        run.id,
        [
            {
                "idx": 0,
                "target_id": "orch-test/numeric/f00000",
                "dataset": "orch-test",
                "family": "numeric",
                "variant": "clean",
            }
        ],
    )
    return run.id, store.episodes.of_run(run.id)[0].id


def test_migrations_create_schema_and_are_idempotent(db_url: str) -> None:
    engine = make_engine(db_url)
    assert set(inspect(engine).get_table_names()) == TABLES
    assert current_revision(engine) == "0006"
    upgrade_schema(engine)  # a second start must not fail
    assert current_revision(engine) == "0006"


def test_step_keys_refuse_duplicates(db_url: str) -> None:
    store = Store(make_engine(db_url))
    run_id, ep = _episode(store)
    store.episodes.add_messages(ep, [{"step": 0, "role": "system", "content": "s"}])
    with pytest.raises(IntegrityError):
        store.episodes.add_messages(ep, [{"step": 0, "role": "user", "content": "again"}])
    call = {"step": 2, "idx": 0, "inputs": ["1"], "outputs": [{"input": "1", "output": "3"}]}
    store.episodes.add_target_call(ep, call)
    with pytest.raises(IntegrityError):
        store.episodes.add_target_call(ep, call)
    # a failed step leaves nothing behind (message, calls and counters together)
    with pytest.raises(IntegrityError):
        store.episodes.add_step(
            ep, {"step": 3, "role": "user", "content": "r"}, {"rounds": 9}, calls=[call]
        )
    assert [m.step for m in store.episodes.messages(ep)] == [0]
    assert len(store.episodes.target_calls(ep)) == 1
    assert store.episodes.get(ep).rounds == 0


def test_episodes_created_once(db_url: str) -> None:
    store = Store(make_engine(db_url))
    run_id, _ = _episode(store)
    row = {
        "idx": 0,
        "target_id": "orch-test/numeric/f00000",
        "dataset": "orch-test",
        "family": "numeric",
        "variant": "clean",
    }
    store.episodes.ensure(run_id, [row])
    assert len(store.episodes.of_run(run_id)) == 1


def test_sqlite_runs_in_wal_mode(sqlite_url: str) -> None:
    engine = make_engine(sqlite_url)
    with engine.connect() as c:
        assert c.execute(text("PRAGMA journal_mode")).scalar() == "wal"
