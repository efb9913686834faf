"""Cancelling ends the run's episodes, and an agent step that never returns ends.

- `harness runs cancel` on a run another process (`harness run`) executes: the owner sees the
  cancel in the store and stops its episodes; when the command returns, none is queued or
  running, and the agent is asked for nothing more.
- The same on a run whose owner was killed: once its lease has run out the episodes it left
  "running" end as cancelled.
- An agent whose step never returns, with no max_wall_s: the operator's per-step bound
  (HARNESS_AGENT_STEP_TIMEOUT_S) ends the episode as an agent error saying the step timed out.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from support import wait_for
from support.orch_helpers import ROOT, run_in_process, server_env
from test_orch_ownership import TWO, records, run_cmd, store_of

CLI = [sys.executable, "-m", "interp_harness.harness.cli"]


def _start_run(env: dict[str, str], rec, n_calls: int = 200):  # type: ignore[no-untyped-def]
    cmd = run_cmd(
        rec,
        *TWO,
        "--no-floor",
        "--max-rounds",
        "500",
        "-o",
        f"n_calls={n_calls}",
        "-o",
        "delay=0.3",
    )
    return subprocess.Popen(
        cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _cancel(env: dict[str, str], run_id: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "runs", "cancel", run_id],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_cancel_a_run_another_process_executes(db_url: str, tmp_path) -> None:
    # the owner looks at the store every 2 s: the cancel command must wait for it, and the
    # `harness run` that sees its run cancelled first must let its scheduler end the episodes
    env = server_env(db_url, HARNESS_AGENT_ISOLATION="none", HARNESS_POLL_INTERVAL_S="2")
    rec = tmp_path / "steps.jsonl"
    cli = _start_run(env, rec)
    try:
        wait_for(lambda: len(records(rec)) >= 4, 120, 0.05)  # both episodes running
        store = store_of(db_url)
        run = store.runs.latest(limit=1)[0]
        assert store.episodes.counts(run.id) == {"running": 2}
        done = _cancel(env, run.id)
        assert done.returncode == 0, done.stderr
        cancelled_at = time.time()
        # when the command returns, the owner has ended every episode
        eps = store.episodes.of_run(run.id)
        assert [(e.status, e.end_reason) for e in eps] == [("cancelled", "cancelled")] * 2
        assert store.runs.get(run.id).status == "cancelled"
        out, err = cli.communicate(timeout=120)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
    assert cli.returncode == 0, err[-3000:]
    assert json.loads(out)["status"] == "cancelled"
    # and the owner asked its agent for nothing after that
    time.sleep(1)
    assert not [r for r in records(rec) if r["t"] > cancelled_at]


def test_cancel_a_run_whose_owner_died(sqlite_url: str, tmp_path) -> None:
    env = server_env(sqlite_url, HARNESS_AGENT_ISOLATION="none", HARNESS_RUN_LEASE_S="2")
    rec = tmp_path / "steps.jsonl"
    cli = _start_run(env, rec)
    try:
        wait_for(lambda: len(records(rec)) >= 4, 120, 0.05)
    finally:
        os.kill(cli.pid, signal.SIGKILL)
        cli.wait()
    store = store_of(sqlite_url)
    run = store.runs.latest(limit=1)[0]
    assert store.episodes.counts(run.id) == {"running": 2}
    done = _cancel(env, run.id)
    assert done.returncode == 0, done.stderr
    assert store.runs.get(run.id).status == "cancelled"
    eps = store.episodes.of_run(run.id)
    assert [(e.status, e.end_reason) for e in eps] == [("cancelled", "cancelled")] * 2
    finished = [e.data for e in store.events.of_run(run.id) if e.kind == "episode_finished"]
    assert [d["status"] for d in finished] == ["cancelled", "cancelled"]


@pytest.mark.usefixtures("needs_bwrap")
async def test_step_that_never_returns_ends_as_agent_error(sqlite_url: str, tmp_path) -> None:
    spec = {
        "agent": "orch_recording:RecordingAgent",
        "agent_options": {"hang": True},
        "dataset": "orch-test",
        "ids": ["orch-test/numeric/f00000"],
        "floor": False,
    }
    t0 = time.monotonic()
    # the agent runs in its sandboxed agent host (the default isolation), as in production
    store, [run] = await asyncio.wait_for(
        run_in_process(sqlite_url, spec, agent_step_timeout_s=2), 120
    )
    took = time.monotonic() - t0
    [ep] = store.episodes.of_run(run.id)
    assert (ep.status, ep.end_reason, ep.error_category) == ("error", "agent_error", "agent")
    assert "agent step timed out" in ep.error and "2 s" in ep.error, ep.error
    assert run.status == "failed"
    assert took < 60, took
