"""The store's unit of work (`Store.transaction`) on SQLite and on a real PostgreSQL server: the
repositories it hands out share one transaction, so a step's reply with its target calls, lab
cells, figures, counters and event is stored whole or not at all; out of it each repository's
write commits on its own."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import IntegrityError

from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

COUNTERS = {"rounds": 1, "target_calls": 1, "inputs": 1, "prompt_tokens": 0,
            "completion_tokens": 0, "cost_usd": 0.0, "active_s": 0.1}  # fmt: skip
CALL = {"step": 1, "idx": 0, "inputs": ["1"], "outputs": [{"input": "1", "output": "3"}]}
CELL = {"step": 1, "idx": 0, "number": 1, "code": "plot()", "status": "ok", "cut": {},
        "first_call": 0, "n_calls": 1}  # fmt: skip
FIGURE = {"step": 1, "cell_idx": 0, "index": 0, "png": b"\x89PNG", "width": 1, "height": 1}
EPISODE = {"idx": 0, "target_id": "t0", "dataset": "orch-test", "family": "numeric",
           "variant": "clean"}  # fmt: skip


def _episode(store: Store) -> tuple[str, str]:
    run = store.runs.create(RunSpec(agent="x", dataset="orch-test"), ["t0"])
    store.episodes.ensure(run.id, [EPISODE])
    return run.id, store.episodes.of_run(run.id)[0].id


def _reply(store: Store, run_id: str, ep: str, *, fail: bool = False) -> None:
    """A step's reply as the episode loop stores it; with `fail`, the loop dies after the last
    write and before the commit."""
    with store.transaction() as tx:
        reply = {"step": 1, "role": "user", "content": "r"}
        tx.episodes.add_step(ep, reply, COUNTERS, calls=[CALL])
        tx.lab.add_cells(ep, [CELL], [FIGURE])
        tx.events.add(run_id, "step", {"step": 1}, ep)
        if fail:
            raise RuntimeError("killed before the commit")


def _stored(store: Store, run_id: str, ep: str) -> tuple[int, int, int, int, int, int]:
    episode = store.episodes.get(ep)
    assert episode is not None
    steps = [e for e in store.events.of_run(run_id) if e.kind == "step"]
    return (
        len(store.episodes.messages(ep)),
        len(store.episodes.target_calls(ep)),
        len(store.lab.cells(ep)),
        len(store.lab.figures(ep)),
        len(steps),
        episode.rounds,
    )


def test_a_reply_failing_after_its_writes_leaves_none(db_url: str) -> None:
    store = Store(make_engine(db_url))
    run_id, ep = _episode(store)
    with pytest.raises(RuntimeError):
        _reply(store, run_id, ep, fail=True)
    assert _stored(store, run_id, ep) == (0, 0, 0, 0, 0, 0)
    _reply(store, run_id, ep)
    assert _stored(store, run_id, ep) == (1, 1, 1, 1, 1, 1)


def test_a_reply_refused_midway_by_the_database_leaves_none(db_url: str) -> None:
    store = Store(make_engine(db_url))
    run_id, ep = _episode(store)
    # a figure already stored (a resumed step): the reply's message, call and cell went in
    # first, then the figure's unique key refuses it, and the whole reply goes
    store.lab.add_figures(ep, [FIGURE])
    with pytest.raises(IntegrityError):
        _reply(store, run_id, ep)
    assert _stored(store, run_id, ep) == (0, 0, 0, 1, 0, 0)


def test_reads_in_a_transaction_see_its_writes_and_others_see_them_at_the_commit(
    db_url: str,
) -> None:
    store = Store(make_engine(db_url))
    run_id, ep = _episode(store)
    with store.transaction() as tx:
        tx.episodes.add_messages(ep, [{"step": 0, "role": "system", "content": "s"}])
        assert [m.step for m in tx.episodes.messages(ep)] == [0]
        assert store.episodes.messages(ep) == []  # another connection: not committed yet
    assert [m.step for m in store.episodes.messages(ep)] == [0]


def test_orm_writes_join_the_transaction(db_url: str) -> None:
    """`runs.create` and `episodes.ensure` write through an ORM session: in a unit of work its
    commit must not commit the unit of work's writes early."""
    store = Store(make_engine(db_url))
    with pytest.raises(RuntimeError), store.transaction() as tx:
        run = tx.runs.create(RunSpec(agent="x", dataset="orch-test"), ["t0"])
        tx.episodes.ensure(run.id, [EPISODE])
        assert [e.idx for e in tx.episodes.of_run(run.id)] == [0]
        raise RuntimeError("rolled back")
    assert store.runs.get(run.id) is None and store.episodes.of_run(run.id) == []
    assert store.events.of_run(run.id) == []  # nor its "queued" status event
