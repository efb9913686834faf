"""Crash safety for real: kill -9 the server mid-run, start it again, and check the run finishes
with every step stored exactly once (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from collections import Counter

import httpx
import pytest
from support import wait_for, wait_mid_episode

from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

# kill -9 of a server mid-run and a resume: tens of seconds each (the quick loop leaves them out)
pytestmark = pytest.mark.slow

AFFINE = [(2.0, 1.0), (-3.0, 0.5)]  # orch_plugin's f00000, f00001
N = 12  # commands per episode


def _probe_text(k: int) -> str:
    return f"Let me test x={k}.\nCOMMAND: PYTHON(./temp/function.py {k})"


def test_kill_9_and_resume(db_url: str, start_server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "calls.jsonl"
    env = {"ORCH_TEST_CALL_LOG": str(log), "HARNESS_MAX_CONCURRENCY": "2"}
    srv = start_server(db_url, **env)
    body = {
        "agent": "orch_agents:ProbeAgent",
        "agent_options": {"n_calls": N, "delay": 0.08},
        "dataset": "orch-test",
        "ids": ["orch-test/numeric/f00000", "orch-test/numeric/f00001"],
    }
    run_id = httpx.post(srv.url + "/runs", json=body, timeout=30).json()["id"]
    wait_mid_episode(srv.url, run_id, 3, N - 4)
    srv.kill9()

    store = Store(make_engine(db_url, upgrade=False))
    assert store.runs.get(run_id).status == "running"
    before = {
        e.id: [(m.step, m.content) for m in store.episodes.messages(e.id)]
        for e in store.episodes.of_run(run_id)
    }
    # really interrupted mid-episode (the other episode may not have started, or have finished)
    assert any(2 < len(v) < 2 * N + 3 for v in before.values()), before

    srv2 = start_server(db_url, **env)
    wait_for(lambda: httpx.get(f"{srv2.url}/runs/{run_id}").json()["status"] == "completed", 90)

    eps = store.episodes.of_run(run_id)
    for ep, (a, b) in zip(eps, AFFINE, strict=True):
        msgs = store.episodes.messages(ep.id)
        # the steps stored before the crash are untouched, and nothing is missing or repeated
        assert [(m.step, m.content) for m in msgs][: len(before[ep.id])] == before[ep.id]
        assert [m.step for m in msgs] == list(range(2 * N + 3))
        assistant = [m.content for m in msgs if m.role == "assistant"]
        assert assistant[:N] == [_probe_text(k) for k in range(N)]
        assert assistant[N].startswith("[DESCRIPTION]:")
        replies = [m.content for m in msgs if m.role == "user"][1:]
        assert replies == [
            f"Response: Function input - output pairs: ({k}, {a * k + b}) \n" for k in range(N)
        ]
        calls = store.episodes.target_calls(ep.id)
        assert [(c.step, c.inputs) for c in calls] == [(2 + 2 * k, [str(k)]) for k in range(N)]
        assert (ep.status, ep.rounds, ep.target_calls) == ("completed", N + 1, N)
        scores = store.scores.of_episodes([ep.id])
        assert {s.metric: s.value for s in scores} == {"answered": 1.0, "calls": N}

    # executions seen by the targets themselves: each command ran once, except at most the one
    # in flight when the server died (its result was never stored, so it ran again on resume)
    ran = Counter(
        (r["target"], r["inputs"][0]) for r in map(json.loads, log.read_text().splitlines())
    )
    for target in ("orch-test/numeric/f00000", "orch-test/numeric/f00001"):
        counts = [ran[(target, str(k))] for k in range(N)]
        assert min(counts) == 1 and sum(counts) <= N + 1, counts
