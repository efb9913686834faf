"""Hostile lab cells (issue 42, protocol modes `code` and `code-tools`) on the canary server:
cells that read every process's environment, descriptors and files, the channel's other end
and every socket; forge frames on the channel; call another target or command; blow the target
budget; fork, fill memory and disk, loop forever, print gigabytes, write a 40 MB or a malformed
frame. Each run ends with the honest function defined in the lab and submitted by name.

What must hold: no canary (nor the target's ground-truth marker) in the episode as the API
serves it or on its page (the store's rows and the server's log are read by test_sinks.py,
after this); no 5xx; the budget holds and the store has exactly the calls made; the hostile
cells change no score (code_success 1.0, as the honest answer's); the lab's processes are gone
when the runs end."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from support.battery import EP_TERMINAL, RUN_TIMEOUT_S, TARGET, AdvServer
from support.canary import Canaries, assert_clean

from interp_harness.function_store.models import make_canary
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

AGENT = "lab_agents:HostileCellAgent"
BUDGET = 5
RUNS: dict[str, dict[str, Any]] = {
    "snoop": {"cells": ["snoop", "channel", "other-target"], "mode": "code"},
    "resources": {
        "cells": [
            "fork-bomb",
            "memory",
            "memory-processes",
            "disk",
            "loop",
            "output",
            "huge-frame",
            "malformed",
        ],
        "mode": "code",
    },
    "budget": {
        "cells": ["budget", "budget"],
        "mode": "code",
        "budgets": {"max_target_calls": BUDGET},
    },
    "tools": {"cells": ["snoop", "other-target", "channel"], "mode": "code-tools"},
}


@pytest.fixture(scope="module")
def lab_runs(adv_server: AdvServer) -> dict[str, dict[str, Any]]:
    """Every hostile lab run, started together; name -> the episode as a token holder reads it."""
    ids = {}
    for name, r in RUNS.items():
        spec = {
            "agent": AGENT,
            "agent_options": {"cells": r["cells"]},
            "dataset": "find-v1",
            "ids": [TARGET],
            "floor": False,
            "protocol": {"mode": r["mode"]},
            "budgets": r.get("budgets", {}),
        }
        ids[name] = adv_server.post_spec(spec)["id"]
    done = adv_server.wait_runs(list(ids.values()), RUN_TIMEOUT_S)
    assert set(done) == set(ids.values()), f"lab runs still going: {set(ids.values()) - set(done)}"
    return {name: adv_server.episode(rid) for name, rid in ids.items()}


@pytest.mark.parametrize("name", list(RUNS))
def test_hostile_cells_leak_nothing(
    name: str, lab_runs: dict[str, dict[str, Any]], adv_server: AdvServer, canaries: Canaries
) -> None:
    ep = lab_runs[name]
    assert ep["status"] in EP_TERMINAL and ep["error_category"] != "infrastructure", ep
    text = json.dumps(ep)
    assert_clean(canaries, f"GET /episodes/{ep['id']} of lab run {name}", text)
    assert make_canary(TARGET) not in text  # the ground truth's marker
    page = adv_server.api.get(f"/ui/episodes/{ep['id']}", headers=adv_server.auth)
    assert page.status_code == 200
    assert_clean(canaries, f"/ui/episodes/{ep['id']} of lab run {name}", page.text)
    cells = Store(make_engine(adv_server.db_url)).lab.cells(ep["id"])
    # every cell, and the honest one (the budget run ends in its first cell)
    assert len(cells) == (1 if name == "budget" else len(RUNS[name]["cells"]) + 1)
    for c in cells:
        assert "CANARY-LIKE []" in c.stdout or not c.stdout.startswith("CANARY-LIKE"), c.stdout[
            :300
        ]


@pytest.mark.parametrize("name", ["snoop", "resources", "tools"])
def test_hostile_cells_change_no_score(name: str, lab_runs: dict[str, dict[str, Any]]) -> None:
    ep = lab_runs[name]
    assert (ep["status"], ep["end_reason"]) == ("completed", "description") or (
        ep["status"],
        ep["end_reason"],
    ) == ("completed", "submit_answer"), ep
    # the honest function, exported from the lab (lab:f)
    assert "import numpy as np\n\ndef f(x):\n    return np.ceil(x)" in ep["final_answer"]
    (score,) = [s for s in ep["scores"] if s["metric"] == "code_success"]
    assert (score["status"], score["value"]) == ("ok", 1.0), score


def test_what_a_cell_cannot_do(lab_runs: dict[str, dict[str, Any]], adv_server: AdvServer) -> None:
    store = Store(make_engine(adv_server.db_url))
    by_step = sorted(store.lab.cells(lab_runs["snoop"]["id"]), key=lambda c: c.number)
    other = by_step[2].stdout.splitlines()
    assert len(other) == 5 and all("refused:" in line for line in other), other
    # the forged call of another cell is never answered and nothing of it is recorded: the lab
    # restarts ("out of turn"), or the cell ends in error (seen once in a full run; which one
    # depends on the order the cell's writes reach the descriptors it tries)
    forged = by_step[1]
    assert forged.status in ("restarted", "error"), forged.status
    if forged.status == "restarted":
        assert "out of turn" in (forged.error or ""), forged.error
    assert store.episodes.target_calls(lab_runs["snoop"]["id"]) == []
    res = sorted(store.lab.cells(lab_runs["resources"]["id"]), key=lambda c: c.number)
    status = {RUNS["resources"]["cells"][i]: c.status for i, c in enumerate(res[:-1])}
    assert status["loop"] == "restarted" and status["huge-frame"] == "restarted"
    assert status["malformed"] == "restarted" and status["memory"] in ("error", "restarted")
    assert res[-1].status == "ok"  # the lab came back for the honest answer
    output = res[RUNS["resources"]["cells"].index("output")]
    assert output.cut.get("stdout", 0) > 100_000_000 and len(output.stdout) <= 32_000


def test_the_budget_holds_in_a_cell(
    lab_runs: dict[str, dict[str, Any]], adv_server: AdvServer
) -> None:
    ep = lab_runs["budget"]
    assert (ep["status"], ep["end_reason"], ep["target_calls"]) == (
        "budget_exhausted",
        "target_calls",
        BUDGET,
    )
    store = Store(make_engine(adv_server.db_url))
    assert len(store.episodes.target_calls(ep["id"])) == BUDGET
    [cell] = store.lab.cells(ep["id"])
    assert cell.n_calls == BUDGET and "BudgetExhausted" in (cell.error or "")


def test_no_lab_outlives_its_episode(lab_runs: dict[str, dict[str, Any]]) -> None:
    """No process of this machine still runs a lab kernel of the server's episodes (the fork
    bomb's and the memory filler's children included)."""
    assert lab_runs
    deadline = time.monotonic() + 30
    while True:
        left = [p for p in _pids() if b"/opt/lab/kernel.py" in _cmdline(p)]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(1)
    mine = [p for p in left if _under_server(p)]
    assert mine == [], [_cmdline(p) for p in mine]


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _under_server(pid: int) -> bool:
    """Whether `pid` descends from a `harness serve` process (this suite's server)."""
    for _ in range(64):
        if b"serve" in _cmdline(pid) and b"harness" in _cmdline(pid):
            return True
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            pid = int(stat[stat.rindex(")") + 2 :].split()[1])
        except (OSError, ValueError):
            return False
        if pid <= 1:
            return False
    return False
