"""The `lab_figures` table (migration 0006) on SQLite and on a real PostgreSQL server: a cell's
PNG bytes come back byte for byte, in (step, cell_idx, index) order, only for their episode; a
figure is stored once (a resumed step cannot add it twice); figures stored with a reply commit
with it."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.exc import IntegrityError

from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

# every byte value, NUL and invalid UTF-8 included: the column is binary, not text
BLOB = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 3


def _episodes(store: Store, n: int) -> list[str]:
    run = store.runs.create(RunSpec(agent="x", dataset="orch-test"), ["orch-test/numeric/f00000"])
    store.episodes.ensure(
        run.id,
        [
            {
                "idx": i,
                "target_id": f"orch-test/numeric/f0000{i}",
                "dataset": "orch-test",
                "family": "numeric",
                "variant": "clean",
            }
            for i in range(n)
        ],
    )
    return [e.id for e in store.episodes.of_run(run.id)]


def _fig(step: int, cell_idx: int, index: int, png: bytes = BLOB) -> dict:  # type: ignore[type-arg]
    return {"step": step, "cell_idx": cell_idx, "index": index, "png": png, "width": 640,
            "height": 480}  # fmt: skip


def test_figures_round_trip_in_order_per_episode(db_url: str) -> None:
    store = Store(make_engine(db_url))
    ep, other = _episodes(store, 2)
    store.lab.add_figures(ep, [_fig(4, 1, 0, b"late"), _fig(2, 0, 1, b"second"), _fig(2, 0, 0)])
    store.lab.add_figures(other, [_fig(2, 0, 0, b"other")])
    rows = store.lab.figures(ep)
    assert [(f.step, f.cell_idx, f.index, f.png) for f in rows] == [
        (2, 0, 0, BLOB),
        (2, 0, 1, b"second"),
        (4, 1, 0, b"late"),
    ]
    assert (rows[0].width, rows[0].height, rows[0].episode_id) == (640, 480, ep)
    assert [f.png for f in store.lab.figures(other)] == [b"other"]
    with pytest.raises(IntegrityError):
        store.lab.add_figures(ep, [_fig(2, 0, 0)])


def test_figures_commit_with_their_reply_and_cells(db_url: str) -> None:
    store = Store(make_engine(db_url))
    [ep] = _episodes(store, 1)
    ep_row = store.episodes.get(ep)
    assert ep_row is not None
    cell = {"step": 2, "idx": 0, "number": 1, "code": "plot()", "status": "ok", "cut": {},
            "first_call": 0, "n_calls": 0}  # fmt: skip
    counters = {"rounds": 1, "target_calls": 0, "inputs": 0, "prompt_tokens": 0,
                "completion_tokens": 0, "cost_usd": 0.0, "active_s": 0.1}  # fmt: skip
    reply = {"step": 3, "role": "user", "content": "[figure 1: 640x480 PNG]"}

    def store_reply(figure: dict[str, Any]) -> None:  # as the episode loop stores a reply
        with store.transaction() as tx:
            tx.episodes.add_step(ep, reply, counters)
            tx.lab.add_cells(ep, [cell], [figure])

    store_reply(_fig(2, 0, 0))
    assert [f.png for f in store.lab.figures(ep)] == [BLOB]
    # a step stored twice (a resume after the commit) fails whole: no second figure either
    with pytest.raises(IntegrityError):
        store_reply(_fig(2, 0, 1))
    assert len(store.lab.figures(ep)) == 1
    # cells of a message whose reply is never stored keep their figures too
    ended = {**cell, "step": 4, "number": 2}
    store.lab.add_cells(ep, [ended], [_fig(4, 0, 0, b"end")])
    assert [f.png for f in store.lab.figures(ep)] == [BLOB, b"end"]
