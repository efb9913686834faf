"""An episode that ended without any score is an error in every summary, never silently missing
from the means: REST run detail and episode, `harness runs show`, `harness report`, the JSONL and
Inspect exports, the web UI's run page and runs list.

The run is real (in-process scheduler, ProbeAgent); its scorer returns nothing for one target,
which leaves that episode completed with no score, as a lost scoring result did.
"""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import orch_plugin
import pytest
from support.orch_helpers import ROOT, run_in_process, server_env

CLI = [sys.executable, "-m", "interp_harness.harness.cli"]
IDS = ["orch-test/numeric/f00000", "orch-test/numeric/f00001"]
LOST = "orch-test/numeric/f00001"


async def lose_one(target, final_answer, stats, ctx):  # type: ignore[no-untyped-def]
    if target.id == LOST:
        return []
    return await orch_plugin.score_hook(target, final_answer, stats, ctx)


def cli(env: dict[str, str], *args: str) -> str:
    r = subprocess.run(
        [*CLI, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def _is_unscored(group: dict) -> bool:
    return (
        group["where"] == "score"
        and group["metric"] == "scoring"
        and "never scored" in group["message"]
        and group["episodes"] == 1
    )


@pytest.mark.slow
async def test_completed_episode_without_scores_is_an_error(
    sqlite_url: str, start_server, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    spec = {
        "agent": "orch_agents:ProbeAgent",
        "agent_options": {"n_calls": 1},
        "dataset": "orch-test",
        "ids": IDS,
        "floor": False,
    }
    store, [run] = await run_in_process(sqlite_url, spec, hook=lose_one, agent_isolation="none")
    eps = {e.target_id: e for e in store.episodes.of_run(run.id)}
    assert run.status == "completed"
    assert [e.status for e in eps.values()] == ["completed", "completed"]
    scores = store.scores.of_episodes
    assert not scores([eps[LOST].id]) and scores([eps[IDS[0]].id])
    lost = eps[LOST].id
    env = server_env(sqlite_url)

    shown = json.loads(cli(env, "runs", "show", run.id, "--json"))
    assert [g for g in shown["errors"] if _is_unscored(g)], shown["errors"]
    assert shown["errors_by_category"] == {"unscored": 1}
    scoring = [m for m in shown["metrics"] if m["metric"] == "scoring"]
    assert scoring == [{"metric": "scoring", "n": 0, "n_errors": 1, "mean": None}]
    assert "never scored" in cli(env, "runs", "show", run.id)

    report = json.loads(cli(env, "report", run.id, "--json"))["report"]
    assert [g for g in report["errors"] if _is_unscored(g)], report["errors"]
    numeric = [r for r in report["rows"] if r["metric"] == "code_success"]
    assert numeric and all(r["errors"] == {"infrastructure": 1} for r in numeric), numeric

    lines = [json.loads(x) for x in cli(env, "export", run.id).splitlines()]
    exported = {x["id"]: x for x in lines}[lost]
    assert [(s["metric"], s["status"]) for s in exported["scores"]] == [("scoring", "error")]

    out = tmp_path / "run.json"
    cli(env, "export", run.id, "--format", "inspect", "-o", str(out))
    samples = {s["metadata"]["episode_id"]: s for s in json.loads(out.read_text())["samples"]}
    assert samples[lost]["scores"]["scoring"]["value"] == "error"

    srv = start_server(sqlite_url)
    detail = httpx.get(f"{srv.url}/runs/{run.id}", timeout=60).json()
    assert [g for g in detail["errors"] if _is_unscored(g)] and detail["errors_by_category"] == {
        "unscored": 1
    }
    ep = httpx.get(f"{srv.url}/episodes/{lost}", timeout=60).json()
    assert [(s["metric"], s["status"]) for s in ep["scores"]] == [("scoring", "error")]
    assert "never scored" in httpx.get(f"{srv.url}/ui/runs/{run.id}", timeout=60).text
    assert "unscored" in httpx.get(f"{srv.url}/ui/runs", timeout=60).text
