"""One owner per run: `harness serve` and `harness run` as real processes on one store (SQLite and
PostgreSQL). The agent records every step it is asked for (orch_recording), so the tests count
real agent calls, independently of the store.

- Both processes alive: the run the CLI stored is executed by the CLI alone; every step of every
  episode is asked for exactly once; nothing ends in a UNIQUE error; every episode is scored.
- The CLI killed (SIGKILL) mid-run: the server takes the run over once the CLI's lease has run
  out (never before) and finishes it; no step is asked for twice, except the one in flight when
  the CLI died (its reply was never stored).
- The CLI paused (SIGSTOP) past its lease, then continued: the server has taken the run over, and
  the continued CLI asks its agent for nothing more and writes nothing: no episode runs in two
  processes at once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from support import wait_for
from support.orch_helpers import ROOT, server_env

from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

# several processes on one store, leases running out (the quick loop leaves them out)
pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "interp_harness.harness.cli"]
TWO = ["--id", "orch-test/numeric/f00000", "--id", "orch-test/numeric/f00001"]
DUPLICATES = ("UNIQUE constraint", "duplicate key", "IntegrityError")


def run_cmd(record: Path, *args: str) -> list[str]:
    return [
        *CLI,
        "run",
        "--agent",
        "orch_recording:RecordingAgent",
        # in this process, so that the agent can append to the record file (an agent host's
        # sandbox has no writable file of the host)
        "--agent-isolation",
        "none",
        "-d",
        "orch-test",
        "-o",
        f"record={record}",
        "--json",
        *args,
    ]


def records(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def store_of(db: str) -> Store:
    return Store(make_engine(db, upgrade=False))


def assert_clean(store: Store, run_ids: list[str], *logs: str) -> None:
    """Every episode completed and scored, nothing in a duplicate-key error."""
    for run_id in run_ids:
        run = store.runs.get(run_id)
        assert run.status == "completed", (run.status, run.error)
        for ep in store.episodes.of_run(run_id):
            assert (ep.status, ep.error) == ("completed", None), (ep.id, ep.status, ep.error)
            assert ep.scored and store.scores.of_episodes([ep.id]), ep.id
    for text in logs:
        assert not any(d in text for d in DUPLICATES), text[-3000:]


def steps_asked(recs: list[dict]) -> tuple[int, Counter[str]]:
    """(calls of the first step, calls per later step). The first step's conversation is the
    same in every episode; from the second on it carries the episode's own target outputs."""
    return sum(r["k"] == 0 for r in recs), Counter(r["conv"] for r in recs if r["k"] > 0)


def test_cli_and_server_on_one_store(db_url: str, start_server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = server_env(db_url, HARNESS_AGENT_ISOLATION="none")
    srv = start_server(db_url, cli=True, HARNESS_AGENT_ISOLATION="none")
    rec = tmp_path / "steps.jsonl"
    n_calls = 3
    cli = subprocess.Popen(
        run_cmd(rec, "-f", "numeric", "-o", f"n_calls={n_calls}", "-o", "delay=0.05"),
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = cli.communicate(timeout=300)
    assert cli.returncode == 0, err[-3000:]
    summary = json.loads(out)
    run_id, floor_id = summary["id"], summary["floor"]["id"]
    assert summary["status"] == "completed" and summary["floor"]["status"] == "completed"

    store = store_of(db_url)
    n_eps = len(store.episodes.of_run(run_id))
    assert n_eps == 6
    assert_clean(store, [run_id, floor_id], srv.log_path.read_text(), err)
    # the process that stored the run executed it, alone
    assert store.runs.get(run_id).owner.split(":")[1] == str(cli.pid)
    recs = records(rec)
    assert {r["pid"] for r in recs} == {cli.pid}
    first, later = steps_asked(recs)
    assert first == n_eps
    assert len(later) == n_eps * n_calls and set(later.values()) == {1}, later
    assert summary["usage"]["rounds"] == n_eps * (n_calls + 1)


def _server_and_cli(db: str, start_server, rec: Path, n_calls: int, **popen: Any):  # type: ignore[no-untyped-def]
    """A server and a `harness run` (two targets, `n_calls` slow steps each, recorded to `rec`) on
    one store, with a 2 s run lease."""
    lease = {"HARNESS_RUN_LEASE_S": "2"}
    env = server_env(db, HARNESS_AGENT_ISOLATION="none", **lease)
    srv = start_server(db, cli=True, HARNESS_AGENT_ISOLATION="none", **lease)
    argv = run_cmd(rec, *TWO, "--no-floor", "-o", f"n_calls={n_calls}", "-o", "delay=0.3")
    return srv, subprocess.Popen(argv, env=env, cwd=ROOT, **popen)


def test_owner_killed_run_taken_over_after_its_lease(db_url: str, start_server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    rec, n_calls = tmp_path / "steps.jsonl", 12
    srv, cli = _server_and_cli(
        db_url, start_server, rec, n_calls, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for(lambda: len(records(rec)) >= 6, 120, 0.05)
    finally:
        os.kill(cli.pid, signal.SIGKILL)
        cli.wait()
    killed_at = time.time()
    # while the CLI was alive, nobody else asked the agent for anything
    assert {r["pid"] for r in records(rec)} == {cli.pid}
    store = store_of(db_url)
    run = store.runs.latest(limit=1)[0]
    assert run.status == "running" and run.owner.split(":")[1] == str(cli.pid)
    cli_owner = run.owner

    wait_for(lambda: httpx.get(f"{srv.url}/runs/{run.id}").json()["status"] == "completed", 120)
    assert_clean(store, [run.id], srv.log_path.read_text())
    taken = [e.data for e in store.events.of_run(run.id) if e.kind == "run_owner"]
    assert taken[-1]["previous"] == cli_owner and taken[-1]["owner"] != cli_owner
    assert store.runs.get(run.id).owner == taken[-1]["owner"]

    recs = records(rec)
    by_server = [r for r in recs if r["pid"] != cli.pid]
    # the server asked the agent for nothing while the CLI held the run
    assert by_server and min(r["t"] for r in by_server) > killed_at
    first, later = steps_asked(recs)
    # each step asked for once, except at most the one in flight per episode at the kill
    assert len(later) == 2 * n_calls and max(later.values()) <= 2, later
    repeated = [k for k, n in later.items() if n > 1]
    assert first + len(repeated) <= 2 + 2, (first, repeated)
    for ep in store.episodes.of_run(run.id):
        msgs = store.episodes.messages(ep.id)
        assert [m.step for m in msgs] == list(range(2 * n_calls + 3))
        calls = store.episodes.target_calls(ep.id)
        assert [c.step for c in calls] == [2 + 2 * k for k in range(n_calls)]


def _paused_outside_a_write(pid: int, sqlite_url: str) -> bool:
    """Pause `pid`; True when it holds no write transaction on the SQLite store (else resume it).
    A writer paused mid-transaction blocks every process's writes ("database is locked"): that is
    SQLite's, not the lease's, and no takeover could follow it (seen once under a loaded CI)."""
    import sqlite3

    os.kill(pid, signal.SIGSTOP)
    con = sqlite3.connect(sqlite_url.removeprefix("sqlite:///"), timeout=0)
    try:
        con.execute("BEGIN IMMEDIATE")  # takes the write lock only if nobody holds it
        con.rollback()
        return True
    except sqlite3.OperationalError:
        os.kill(pid, signal.SIGCONT)
        time.sleep(0.01)
        return False
    finally:
        con.close()


def test_paused_owner_stops_once_taken_over(sqlite_url: str, start_server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    rec, n_calls = tmp_path / "steps.jsonl", 12
    srv, cli = _server_and_cli(
        sqlite_url,
        start_server,
        rec,
        n_calls,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: len(records(rec)) >= 6, 120, 0.05)
        wait_for(lambda: _paused_outside_a_write(cli.pid, sqlite_url), 60, 0)
        assert {r["pid"] for r in records(rec)} == {cli.pid}  # the CLI alone, so far
        # the server takes over once the lease has run out, and makes progress
        wait_for(lambda: any(r["pid"] != cli.pid for r in records(rec)), 60, 0.05)
        wait_for(lambda: sum(r["pid"] != cli.pid for r in records(rec)) >= 4, 60, 0.05)
    finally:
        os.kill(cli.pid, signal.SIGCONT)
    resumed_at = time.time()
    out, err = cli.communicate(timeout=300)
    # the CLI waited for the run's end (executed by the server) and reports it
    assert cli.returncode == 0, err[-3000:]
    assert json.loads(out)["status"] == "completed"

    store = store_of(sqlite_url)
    run = store.runs.latest(limit=1)[0]
    assert_clean(store, [run.id], srv.log_path.read_text(), err)
    recs = records(rec)
    assert not [r for r in recs if r["pid"] == cli.pid and r["t"] > resumed_at]
    first, later = steps_asked(recs)
    assert len(later) == 2 * n_calls and max(later.values()) <= 2, later
    for ep in store.episodes.of_run(run.id):
        assert [m.step for m in store.episodes.messages(ep.id)] == list(range(2 * n_calls + 3))
