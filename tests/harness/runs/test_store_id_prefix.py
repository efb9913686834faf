"""The store's id-prefix lookup and running-episode counters on SQLite and PostgreSQL (LIKE with
escaped wildcards: a `%` or `_` typed by a user matches itself, not anything)."""

from __future__ import annotations

from support.cli_store import add_run

from interp_harness.harness.store.repo import open_store


def test_ids_starting_and_running_counters(db_url: str) -> None:
    store = open_store(db_url)
    rid = add_run(store, "scripted-numeric", "numeric", [{"code_success": 1.0}] * 2)
    assert store.runs.ids_starting(rid[:3]) == [rid]
    assert store.runs.ids_starting(rid) == [rid]
    assert store.runs.ids_starting("%") == [] and store.runs.ids_starting("_") == []
    eps = [e.id for e in store.episodes.of_run(rid)]
    assert store.episodes.ids_starting(eps[0]) == [eps[0]]
    assert sorted(store.episodes.ids_starting("")) == sorted(eps)

    assert store.episodes.running_counters(rid) == {}  # both ended
    other = add_run(store, "scripted-numeric", "numeric", [])
    store.episodes.ensure(
        other,
        [{"idx": 0, "target_id": "t", "dataset": "find-gen", "family": "numeric", "variant": "c"}],
    )
    [ep] = store.episodes.of_run(other)
    store.episodes.start(ep.id, other)
    store.episodes.update(ep.id, rounds=4, target_calls=3)
    assert store.episodes.running_counters(other) == {ep.id: (4, 3)}
