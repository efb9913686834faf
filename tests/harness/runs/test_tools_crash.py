"""Crash safety in protocol mode `tools`, for real: kill -9 the API server mid-run (agents in their
bwrap agent hosts), start it again, and check every tool call ran and was stored exactly once, its
result right after it, the target calls linked by (step, index) (SQLite and PostgreSQL)."""

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

N = 10  # tool calls per episode, one per message
TARGETS = {"orch-test/numeric/f00000": (2.0, 1.0), "orch-test/numeric/f00001": (-3.0, 0.5)}


def test_kill_9_and_resume_in_tools_mode(db_url: str, start_server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "calls.jsonl"
    env = {"ORCH_TEST_CALL_LOG": str(log), "HARNESS_MAX_CONCURRENCY": "2"}
    srv = start_server(db_url, **env)
    script = [[{"name": "call_function", "arguments": {"inputs": [str(k)]}}] for k in range(N)]
    body = {
        "agent": "tool_agents:ScriptedToolsAgent",
        "agent_options": {"script": script, "delay": 0.08},
        "dataset": "orch-test",
        "ids": list(TARGETS),
        "protocol": {"mode": "tools"},
    }
    r = httpx.post(srv.url + "/runs", json=body, timeout=30)
    assert r.status_code == 201, r.text
    run_id = r.json()["id"]
    wait_mid_episode(srv.url, run_id, 3, N - 4)
    srv.kill9()

    store = Store(make_engine(db_url, upgrade=False))
    before = {e.id: len(store.episodes.messages(e.id)) for e in store.episodes.of_run(run_id)}
    # really interrupted mid-episode (the other episode may not have started, or have finished)
    assert any(2 < n < 2 * N + 3 for n in before.values()), before

    srv2 = start_server(db_url, **env)
    wait_for(lambda: httpx.get(f"{srv2.url}/runs/{run_id}").json()["status"] == "completed", 90)

    for ep in store.episodes.of_run(run_id):
        a, b = TARGETS[ep.target_id]
        msgs = store.episodes.messages(ep.id)
        assert [m.step for m in msgs] == list(range(2 * N + 3))
        assert [m.role for m in msgs[2:]] == ["assistant", "tool"] * N + ["assistant"]
        for k in range(N):
            call, result = msgs[2 + 2 * k], msgs[3 + 2 * k]
            assert [c["arguments"] for c in call.tool_calls] == [{"inputs": [str(k)]}]
            assert result.tool_call_id == call.tool_calls[0]["id"] == f"t{k}_0"
            assert (
                result.content == f"Response: Function input - output pairs: ({k}, {a * k + b}) \n"
            )
        rows = store.episodes.tool_calls(ep.id)
        assert [(r.step, r.idx, r.call_id) for r in rows] == [
            (2 + 2 * k, 0, f"t{k}_0") for k in range(N)
        ] + [(2 + 2 * N, 0, f"t{N}_0")]
        calls = store.episodes.target_calls(ep.id)
        assert [(c.step, c.idx, c.inputs) for c in calls] == [
            (2 + 2 * k, 0, [str(k)]) for k in range(N)
        ]
        assert (ep.status, ep.end_reason, ep.rounds, ep.target_calls) == (
            "completed",
            "submit_answer",
            N + 1,
            N,
        )

    # each call ran once, except at most the one in flight when the server died
    ran = Counter(
        (r["target"], r["inputs"][0]) for r in map(json.loads, log.read_text().splitlines())
    )
    for target in TARGETS:
        counts = [ran[(target, str(k))] for k in range(N)]
        assert min(counts) == 1 and sum(counts) <= N + 1, counts
