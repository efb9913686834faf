"""Errors are shown where the user looks, with their messages, grouped: the `harness run`
summary, `harness runs show`, `harness report` and the REST run detail (real CLI processes, a
real uvicorn server, SQLite)."""

from __future__ import annotations

import json
import subprocess

import httpx
import pytest
from support import run_cli, wait_for
from support.orch_helpers import ROOT, Server, server_env

CREDITS = "provider said: insufficient credits"
JUDGE = "RuntimeError: judge endpoint unreachable"


def harness(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`harness ARGS` as `env`, run by this process (support.run_cli)."""
    return run_cli(list(args), env, ROOT)


def _run(env: dict[str, str], agent: str, n: int) -> subprocess.CompletedProcess[str]:
    return harness(
        env, "run", "--agent", agent, "-d", "orch-test", "-f", "numeric", "--limit", str(n),
        "--no-floor",
    )  # fmt: skip


def test_cli_shows_grouped_episode_errors(sqlite_url: str) -> None:
    env = server_env(sqlite_url, COLUMNS="250")
    r = _run(env, "orch_agents:FailingAgent", 3)
    assert r.returncode == 1  # every episode ended in error: the run failed
    assert f"3 episodes: [agent] {CREDITS}" in r.stdout, r.stdout
    run_id = json.loads(harness(env, "runs", "list", "--json").stdout.splitlines()[0])["id"]

    show = harness(env, "runs", "show", run_id)
    assert f"3 episodes: [agent] {CREDITS}" in show.stdout, show.stdout
    assert show.stdout.count(CREDITS) == 4  # the summary line, then each episode's row

    detail = json.loads(harness(env, "runs", "show", run_id, "--json").stdout)
    assert detail["errors"] == [
        {
            "where": "episode",
            "category": "agent",
            "metric": None,
            "agent": None,
            "cause": CREDITS,  # a message of one line is its own cause
            "message": CREDITS,
            "episodes": 3,
            "example_episode": detail["errors"][0]["example_episode"],
        }
    ]

    rep = harness(env, "report", run_id)
    assert "Errors" in rep.stdout and CREDITS in rep.stdout, rep.stdout
    rep_json = json.loads(harness(env, "report", run_id, "--json").stdout)
    assert [(g["agent"], g["episodes"], g["message"]) for g in rep_json["report"]["errors"]] == [
        ("orch_agents:FailingAgent", 3, CREDITS)
    ]


def test_cli_shows_grouped_scorer_errors(sqlite_url: str) -> None:
    env = server_env(sqlite_url, COLUMNS="250", HARNESS_SCORE_HOOK="orch_plugin:failing_hook")
    r = _run(env, "orch_agents:ProbeAgent", 2)
    assert r.returncode == 0, r.stderr
    assert f"2 episodes: [infrastructure, scoring] {JUDGE}" in r.stdout, r.stdout


@pytest.mark.slow
def test_rest_run_detail_groups_errors(sqlite_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    srv = Server(server_env(sqlite_url), tmp_path / "server.log").start()
    try:
        c = httpx.Client(base_url=srv.url, timeout=30)
        body = {
            "agent": "orch_agents:FailingAgent",
            "dataset": "orch-test",
            "family": "numeric",
            "limit": 2,
            "floor": False,
        }
        run = c.post("/runs", json=body).json()
        wait_for(lambda: c.get(f"/runs/{run['id']}").json()["status"] == "failed")
        detail = c.get(f"/runs/{run['id']}").json()
        assert [
            (g["where"], g["category"], g["message"], g["episodes"]) for g in detail["errors"]
        ] == [("episode", "agent", CREDITS, 2)]
        eps = {e["id"] for e in c.get(f"/runs/{run['id']}/episodes").json()}
        assert detail["errors"][0]["example_episode"] in eps
    finally:
        srv.stop()
