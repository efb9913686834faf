"""Issue 42's resume acceptance: `harness run` in protocol mode `code` is killed with SIGKILL
mid-episode (its agent waiting in its second step, after the first message's cells built state
in the lab), then the run is resumed by a scheduler in this process. The resumed lab is rebuilt
by replaying the stored cells with their target calls answered from the store: the cell after
the resume uses what the cells before the kill defined, the answer exports a function defined
before the kill, every target call ran once and is stored once, and the agent was not asked
again for its stored step. Real processes, SQLite, bwrap lab, the orch-test target
f(x) = 2x + 1 (each of its calls logged by orch_plugin)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from collections import Counter
from pathlib import Path

import orch_plugin  # noqa: F401  (registers the orch-test targets in this process too)
import pytest
from support import HARNESS_CLI, HOSTED, wait_for
from support.orch_helpers import ROOT, resume_in_process, server_env

from interp_harness.agents.protocol.cells import parse_cells
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

# a process killed and a run resumed (the quick loop leaves it out)
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_bwrap")]

TARGET = "orch-test/numeric/f00000"  # f(x) = 2x + 1


def lines(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_kill_9_mid_episode_and_resume_rebuilds_the_lab(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = f"sqlite:///{tmp_path / 'harness.db'}"
    record, gate, call_log = tmp_path / "steps.jsonl", tmp_path / "gate", tmp_path / "calls.jsonl"
    paths = os.pathsep.join(str(p) for p in (HOSTED, ROOT))
    env = server_env(
        db,
        HARNESS_AGENT_ISOLATION="none",  # the agent appends to `record` (a host's sandbox can't)
        HARNESS_RUN_LEASE_S="2",  # the resumer takes the run over 2 s after the kill
        ORCH_TEST_CALL_LOG=str(call_log),
        PYTHONPATH=paths,
    )
    argv = [*HARNESS_CLI, "run", "--agent", "resume_agents:GatedCellAgent"]
    argv += ["--agent-isolation", "none", "-d", "orch-test", "--id", TARGET, "--mode", "code"]
    argv += ["--no-floor", "--no-preflight", "--json", "-o", f"record={record}"]
    argv += ["-o", f"gate={gate}"]
    err = tmp_path / "cli.err"
    with open(err, "wb") as out:
        cli = subprocess.Popen(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=out)
    try:
        wait_for(lambda: any(r["k"] == 1 for r in lines(record)) or cli.poll() is not None, 60)
        assert cli.poll() is None, err.read_text()[-3000:]
    finally:
        os.kill(cli.pid, signal.SIGKILL)
        cli.wait()

    store = Store(make_engine(db, upgrade=False))
    [run] = store.runs.latest()
    [ep] = store.episodes.of_run(run.id)
    assert ep.status == "running"  # really killed mid-episode
    before = [(c.number, c.status, c.stdout) for c in store.lab.cells(ep.id)]
    assert before == [(1, "ok", ""), (2, "ok", "before [3.0, 5.0, 7.0] [21.0]\n")]

    gate.touch()
    monkeypatch.setenv("ORCH_TEST_CALL_LOG", str(call_log))
    done = asyncio.run(resume_in_process(store, run.id, agent_isolation="none"))
    assert done.status == "completed", done

    [ep] = store.episodes.of_run(run.id)
    assert (ep.status, ep.end_reason, ep.rounds) == ("completed", "description", 3)
    cells = store.lab.cells(ep.id)
    assert [(c.step, c.idx, c.number, c.status) for c in cells] == [
        (2, 0, 1, "ok"),
        (2, 1, 2, "ok"),
        (4, 0, 3, "ok"),
    ]
    # the cell after the resume saw the import, ys, zs and g of the cells before the kill
    assert cells[2].stdout == "after 15.0 [21.0] [201.0] 11\n", cells[2]
    reply = store.episodes.messages(ep.id)[5].content
    assert reply.startswith("Response: cell 3 ran (1 target call).")  # no note: nothing lost
    assert parse_cells(reply)[0].stdout == cells[2].stdout
    # the answer's lab:g is the source of g, defined before the kill
    assert "def g(x):\n    return 2 * x + 1" in (ep.final_answer or "")

    # every target call stored once, made once: the replay answered from the store
    calls = [(c.step, c.idx, c.inputs) for c in store.episodes.target_calls(ep.id)]
    assert calls == [(2, 0, ["4"]), (2, 1, ["1", "2", "3"]), (2, 2, ["10"]), (4, 0, ["100"])]
    assert ep.target_calls == 4
    made = Counter(tuple(r["inputs"]) for r in lines(call_log) if r["target"] == TARGET)
    assert made == Counter({("4",): 1, ("1", "2", "3"): 1, ("10",): 1, ("100",): 1})

    # the stored first step was not asked for again; the second, in flight at the kill, once more
    steps = lines(record)
    assert [r["k"] for r in steps] == [0, 1, 1, 2]
    assert steps[0]["pid"] == steps[1]["pid"] == cli.pid
    assert steps[2]["pid"] == steps[3]["pid"] == os.getpid()
    assert steps[1]["conv"] == steps[2]["conv"]  # the same conversation, from the store
