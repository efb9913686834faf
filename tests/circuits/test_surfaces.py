"""The circuits baselines through every surface a run takes, on one library target of the session's
build (targets and labs in bubblewrap, SQLite): `POST /runs` on the real API server (with the
family's floor beside it), an external agent over MCP on that server (the `mcp` SDK's client
running `scripted-circuits`' strategy), `harness run --mode code` (`scripted-circuits-code`, whose
cell reads numpy arrays), and the Inspect task `interp_harness/circuits` (Inspect's mockllm
answering as `scripted-circuits` does, through the harness's text loop). Each episode is scored:
every report row of the family present, no error."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support import ROOT, run_cli
from support.mcp_drive import drive
from support.neuron_runs import wait_done
from support.orch_helpers import Server

from interp_harness.agents.base import Message
from interp_harness.agents.registry import get_agent
from interp_harness.agents.scripted_circuits import ScriptedCircuitsAgent
from interp_harness.function_store.circuits.benchmark import BENCHMARK
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_bwrap")]
TARGET = "circuits-lib/frac_prevs/0"  # the smallest: 2 layers x 2 heads
RUN = {"dataset": "circuits-lib", "family": "circuits", "ids": [TARGET]}
ROWS = {r.metric for r in BENCHMARK.report_rows}


def _env(home: Path, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_JUDGE")}
    return env | {
        "DATABASE_URL": f"sqlite:///{home / 'h.db'}",
        "HARNESS_HOME": str(home),
        "HARNESS_CACHE_DIR": str(cache),
        "HARNESS_SANDBOX": "bwrap",
        "HARNESS_SCORE_HOOK": "default",
        "HARNESS_POLL_INTERVAL_S": "0.1",
        "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]),
    }


def _scored(scores: list[dict[str, Any]]) -> None:
    """Every metric of the family's rows scored, none an error."""
    by = {s["metric"]: s for s in scores}
    assert ROWS <= set(by), sorted(by)
    bad = [s for s in scores if s["status"] != "ok"]
    assert not bad, bad
    assert 0.0 <= by["node_f1"]["value"] <= 1.0


@pytest.fixture(scope="module")
def api(
    circuits_built: dict, circuits_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("circuits-api")
    srv = Server(_env(home, circuits_cache), home / "api.log").start(timeout=120)
    yield srv
    srv.stop()


def _episode(c: httpx.Client, run_id: str) -> dict[str, Any]:
    [e] = c.get(f"/runs/{run_id}/episodes").json()
    return c.get(f"/episodes/{e['id']}").json()


def test_post_runs_scores_the_agent_and_its_floor(api: Server) -> None:
    c = httpx.Client(base_url=api.url, timeout=60)
    r = c.post("/runs", json={"agent": "scripted-circuits", **RUN})
    assert r.status_code == 201, r.text
    detail = wait_done(c, r.json()["id"], timeout=300)
    assert detail["status"] == "completed", detail
    ep = _episode(c, detail["id"])
    assert ep["status"] == "completed" and ep["final_answer"].startswith("[CIRCUIT]\nL"), ep
    _scored(ep["scores"])
    floor = wait_done(c, detail["floor_run_id"], timeout=300)
    assert (floor["agent"], floor["status"]) == ("circuits-random", "completed"), floor
    report = c.get(f"/runs/{detail['id']}/report").json()["report"]
    for agent in ("scripted-circuits", "circuits-random"):
        rows = {x["metric"]: x for x in report["rows"] if x["agent"] == agent}
        assert set(rows) == ROWS, (agent, sorted(rows))
        for row in rows.values():
            assert row["errors"] == {} and row["scored"] == 1 and row["value"] is not None, row


def test_external_agent_over_mcp(api: Server) -> None:
    c = httpx.Client(base_url=api.url, timeout=60)
    body = {"agent": "external", "protocol": {"mode": "tools"}, "floor": False, **RUN}
    r = c.post("/runs", json=body)
    assert r.status_code == 201, r.text
    [ep] = r.json()["mcp_endpoints"]
    seen = asyncio.run(drive(ep["url"], ep["token"], get_agent("scripted-circuits"), "circuits"))
    assert [s["name"] for s in seen[:2]] == ["task", "run"], seen
    assert not [s for s in seen if s["is_error"]], seen
    assert seen[-1]["name"] == "submit_answer"
    assert wait_done(c, r.json()["id"], timeout=300)["status"] == "completed"
    full = _episode(c, r.json()["id"])
    assert full["status"] == "completed", full
    assert [x["inputs"][0] for x in full["calls"][:2]] == [
        "task",
        seen[1]["arguments"]["inputs"][0],
    ]
    _scored(full["scores"])


def test_code_mode_through_the_cli(in_circuits_cache: Path, tmp_path: Path) -> None:
    env = _env(tmp_path, in_circuits_cache)
    argv = ["run", "--agent", "scripted-circuits-code", "--mode", "code", "-d", "circuits-lib"]
    p = run_cli([*argv, "--id", TARGET, "--no-floor", "--json"], env, tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    run = json.loads(p.stdout)
    assert run["status"] == "completed" and run["errors"] == [], run
    store = Store(make_engine(env["DATABASE_URL"]))
    [ep] = store.episodes.of_run(run["id"])
    cells = store.lab.cells(ep.id)
    assert [x.status for x in cells] == ["ok", "ok"], [x.error for x in cells]
    # each target function a cell called is one target call, counted as a command is
    assert (
        sum(x.n_calls for x in cells) == ep.target_calls == len(store.episodes.target_calls(ep.id))
    )
    task = json.loads(cells[0].stdout)
    lines = [json.loads(x) for x in cells[1].stdout.splitlines()]
    kept = [x for x in lines if x.get("changed")]
    assert kept, lines
    for x in kept:  # activations came back as one [input][position][unit] ndarray
        assert x["shape"][:3] == ["ndarray", 12, task["max_length"]], x
    scores = [
        {"metric": s.metric, "status": s.status, "value": s.value}
        for s in store.scores.of_episodes([ep.id])
    ]
    _scored(scores)


def test_inspect_task(in_circuits_cache: Path, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from inspect_ai import eval as inspect_eval
    from inspect_ai import task_with
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from interp_harness._registry import circuits

    agent = ScriptedCircuitsAgent()

    async def scripted(messages, tools, tool_choice, config) -> ModelOutput:  # type: ignore[no-untyped-def]
        conv = [Message(role=m.role, content=m.text) for m in messages]
        out = ModelOutput.from_content("mockllm/model", (await agent.text_step(conv)).content)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tiktoken
        return out

    short = Path(tempfile.mkdtemp(prefix="ih-", dir="/tmp"))  # sandbox sockets need a short path
    monkeypatch.setattr(tempfile, "tempdir", str(short))
    try:
        task = circuits(
            dataset="circuits-lib", limit=1, protocol="text", text_mode="default", max_rounds=6
        )
        [log] = inspect_eval(
            task_with(task, model=get_model("mockllm/model", custom_outputs=scripted)),
            log_dir=str(tmp_path / "logs"),
            display="none",
        )
    finally:
        shutil.rmtree(short, ignore_errors=True)
    assert log.status == "success", log.error
    [s] = log.samples or []
    assert s.metadata["family"] == "circuits"
    # the task, the probes, one ablation per component, the answer
    assert s.store["interp_harness:rounds"] == 4, s.store
    assert s.store["interp_harness:target_calls"] >= 4, s.store
    assert s.output.completion.startswith("[CIRCUIT]\nL"), s.output.completion
    score = s.scores["interp_harness"]  # type: ignore[index]
    _scored(score.metadata["scores"])
