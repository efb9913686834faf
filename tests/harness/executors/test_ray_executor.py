"""`--executor ray` for real: a Ray cluster of two nodes (`ray start`), PostgreSQL, bwrap agent
hosts and target services on the workers. The same run through the local executor is the
reference, target by target; then a worker process is SIGKILLed mid-episode."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from typing import Any

import pytest
from support import HARNESS_CLI
from support.cluster import ROOT, RayCluster, worker_env
from support.pg_server import create_database

from interp_harness.harness.executors import ExecutorConfigError, make_executor
from interp_harness.harness.settings import Settings
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

# a Ray cluster per session and runs across its workers (the quick loop leaves them out)
pytestmark = pytest.mark.slow

N_TARGETS = 10  # enough for both nodes to take episodes
AGENT = "scale_agents:SlowScriptedNumeric"  # scripted-numeric that must run in an agent host
SELECT = ["-d", "find-gen", "-f", "numeric", "--variant", "clean"]  # noised targets differ per call


def _cli(env: dict[str, str], *args: str) -> list[str]:
    return [*HARNESS_CLI, "run", "-a", AGENT, *args, "--no-floor", "--json"]


def _env(cluster: RayCluster | None, db: str, tmp: Any, **extra: str) -> dict[str, str]:
    return worker_env(
        cluster.token if cluster else "",
        HARNESS_DATABASE_URL=db,
        HARNESS_HOME=str(tmp),
        HARNESS_SCORE_HOOK="scale_plugin:answer_stats",
        HARNESS_POLL_INTERVAL_S="0.1",
        **({"HARNESS_RAY_ADDRESS": cluster.address} if cluster else {}),
        **extra,
    )


def _run(env: dict[str, str], *args: str, timeout: float = 480) -> dict[str, Any]:
    p = subprocess.run(
        _cli(env, *args), env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )
    assert p.returncode == 0, p.stderr[-4000:]
    return json.loads(p.stdout)


def results(store: Store, run_id: str) -> dict[str, dict[str, Any]]:
    """Everything a run produced, per target: outcome, transcript, target calls, scores."""
    out = {}
    for ep in store.episodes.of_run(run_id):
        out[ep.target_id] = {
            "status": (ep.status, ep.end_reason, ep.error_category, ep.error),
            "answer": ep.final_answer,
            "usage": (ep.rounds, ep.target_calls, ep.inputs),
            "messages": [(m.step, m.role, m.content) for m in store.episodes.messages(ep.id)],
            "calls": [
                (c.step, c.idx, c.inputs, c.outputs) for c in store.episodes.target_calls(ep.id)
            ],
            "scores": sorted(
                (s.metric, s.value, s.status) for s in store.scores.of_episodes([ep.id])
            ),
        }
    return out


def executor_events(store: Store, run_id: str) -> list[dict[str, Any]]:
    return [
        {**e.data, "episode_id": e.episode_id}
        for e in store.events.of_run(run_id)
        if e.kind == "executor"
    ]


@pytest.fixture(scope="module")
def local_results(pg_base: str, tmp_path_factory: Any) -> dict[str, dict[str, Any]]:
    """The reference: the same run through the local executor (same store kind)."""
    db = create_database(pg_base)
    env = _env(None, db, tmp_path_factory.mktemp("local"))
    detail = _run(env, *SELECT, "-n", str(N_TARGETS), "--executor", "local")
    assert detail["status"] == "completed"
    return results(Store(make_engine(db, upgrade=False)), detail["id"])


def test_ray_needs_postgresql(tmp_path: Any) -> None:
    sqlite = Settings(executor="ray", home=tmp_path)
    with pytest.raises(ExecutorConfigError, match="PostgreSQL"):
        make_executor(sqlite)
    env = worker_env("", HARNESS_HOME=str(tmp_path))
    env.pop("HARNESS_DATABASE_URL", None)
    env.pop("DATABASE_URL", None)
    p = subprocess.run(
        _cli(env, *SELECT, "-n", "1", "--executor", "ray"),
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2 and "needs a PostgreSQL store" in p.stderr, p.stderr[-2000:]
    serve = [*HARNESS_CLI, "serve", "--executor", "ray", "--port", "0"]
    p = subprocess.run(serve, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "needs a PostgreSQL store" in p.stderr, p.stderr[-2000:]


def test_ray_run_equals_local(
    cluster: RayCluster, pg_url: str, local_results: dict[str, Any], tmp_path: Any
) -> None:
    assert len(local_results) == N_TARGETS
    assert all(r["status"][0] == "completed" for r in local_results.values())
    detail = _run(
        _env(cluster, pg_url, tmp_path), *SELECT, "-n", str(N_TARGETS), "--executor", "ray"
    )
    assert detail["status"] == "completed"
    store = Store(make_engine(pg_url, upgrade=False))
    got = results(store, detail["id"])
    assert sorted(got) == sorted(local_results)
    for tid, want in local_results.items():
        assert got[tid] == want, tid
    # every episode ran as a Ray task, on both nodes, never in the CLI's own process
    events = executor_events(store, detail["id"])
    assert len({e["episode_id"] for e in events}) == N_TARGETS
    assert len({e["node"] for e in events}) == 2


def test_killed_worker_loses_no_step(
    cluster: RayCluster, pg_url: str, local_results: dict[str, Any], tmp_path: Any
) -> None:
    ids = sorted(local_results)[:6]
    env = _env(cluster, pg_url, tmp_path)
    args = [a for t in ids for a in ("--id", t)]
    log = open(tmp_path / "cli.log", "w")  # noqa: SIM115
    proc = subprocess.Popen(
        _cli(env, "-d", "find-gen", *args, "-o", "delay_s=0.4", "--executor", "ray"),
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    try:
        assert _wait_db(pg_url), "the run was not created"
        store = Store(make_engine(pg_url, upgrade=False))
        victim, before = _kill_a_worker_mid_episode(store)
        out, _ = proc.communicate(timeout=480)
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()
    assert proc.returncode == 0, (tmp_path / "cli.log").read_text()[-4000:]
    assert out.lstrip().startswith("{"), out[:2000]
    detail = json.loads(out)
    assert detail["status"] == "completed"
    got = results(store, detail["id"])
    for tid in ids:  # same results as the local run: nothing lost, nothing stored twice
        assert got[tid] == local_results[tid], tid
        steps = [m[0] for m in got[tid]["messages"]]
        assert steps == list(range(len(steps)))
    # the killed episode kept what it had stored and went on in another worker process
    ep_id, pid = victim
    msgs = [(m.step, m.role, m.content) for m in store.episodes.messages(ep_id)]
    assert msgs[: len(before)] == before and len(msgs) > len(before)
    pids = [e["pid"] for e in executor_events(store, detail["id"]) if e["episode_id"] == ep_id]
    assert pids[0] == pid and len(pids) >= 2 and pids[-1] != pid


def test_provider_limit_is_global(cluster: RayCluster, pg_url: str, tmp_path: Any) -> None:
    """A limit of 1 for the agent's provider means one episode at a time in the whole cluster,
    although its two nodes have room for two (the scheduler is the one limiter)."""
    env = _env(cluster, pg_url, tmp_path, HARNESS_PROVIDER_LIMITS='{"local": 1}')
    detail = _run(env, *SELECT, "-n", "3", "-o", "delay_s=0.2", "--executor", "ray")
    assert detail["status"] == "completed"
    store = Store(make_engine(pg_url, upgrade=False))
    eps = sorted(store.episodes.of_run(detail["id"]), key=lambda e: e.started_at)
    assert len(eps) == 3
    for a, b in zip(eps, eps[1:], strict=False):
        assert a.finished_at <= b.started_at, (a.target_id, b.target_id)


def _wait_db(url: str, timeout: float = 120) -> bool:
    """The CLI creates the schema; wait until a run is there."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if Store(make_engine(url, upgrade=False)).runs.latest():
                return True
        except Exception:  # schema not there yet
            pass
        time.sleep(0.5)
    return False


def _kill_a_worker_mid_episode(store: Store, timeout: float = 300) -> tuple[tuple[str, int], Any]:
    """SIGKILL the worker process of a running episode that has stored some steps but not all;
    returns ((episode id, pid), the messages stored before the kill)."""
    [run] = store.runs.latest()
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        by_ep = {e["episode_id"]: e["pid"] for e in executor_events(store, run.id)}
        for ep in store.episodes.of_run(run.id, status=("running",)):
            n = len(store.episodes.messages(ep.id))
            if ep.id in by_ep and 4 <= n <= 8:  # prompt + 1-3 steps; the episode has 13
                os.kill(by_ep[ep.id], signal.SIGKILL)
                before = [(m.step, m.role, m.content) for m in store.episodes.messages(ep.id)]
                return (ep.id, by_ep[ep.id]), before
        time.sleep(0.05)
    raise AssertionError("no episode was caught mid-run")
