"""Protocol mode `code-tools` over MCP (issue 42 item 4): `harness mcp serve --mode code-tools` (a
subprocess, SQLite; the lab in bubblewrap) lists `run_python` beside the benchmark's tools and
says what the lab offers in its prompt `task`. The official `mcp` SDK client's cells run in the
episode's lab: each target call a cell makes is stored in target_calls under the cell's step
(numbered after the message's tool calls), each cell in lab_cells, the values the cell read are
the stored outputs, an answer may name a lab function (`lab:g`), and max_target_calls holds: the
call past it is refused in the cell, the episode ends budget_exhausted with the calls made
stored, and its client is told so."""

from __future__ import annotations

import ast
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.mcp_drive import mcp_client, read_endpoints

from interp_harness.agents.protocol.cells import RUN_PYTHON_SPEC, parse_cells
from interp_harness.function_store.benchmark import benchmark
from interp_harness.function_store.models import CallOutput
from interp_harness.harness.lab.api import call_commands, call_value
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_bwrap")]

ROOT = Path(__file__).resolve().parents[3]
TARGETS = ["find-v1/numeric/f00150", "find-v1/numeric/f00001"]
BUDGET = 3  # max_target_calls of each episode

CELL = """from target import call_function, f
ys = call_function([1, 2, 3])
print(repr(ys))
def g(x):
    return 2 * x
f(4)
"""
OVER_BUDGET = "from target import f\nfor x in range(5):\n    f(x)\n"


def serve(tmp: Path) -> tuple[subprocess.Popen[bytes], Path, Path]:
    db, endpoints = tmp / "mcp.db", tmp / "endpoints.json"
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{db}",
        "HARNESS_SANDBOX": "inprocess",  # the targets and scoring; a lab is bubblewrap always
        "HARNESS_PLUGINS": "",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    argv = ["mcp", "serve", "--mode", "code-tools", "-d", "find-v1", "-f", "numeric"]
    argv += [a for t in TARGETS for a in ("--id", t)]
    argv += ["--no-floor", "--max-target-calls", str(BUDGET), "--mcp-endpoints", str(endpoints)]
    with open(tmp / "serve.log", "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "interp_harness.harness.cli", *argv],
            env=env,
            cwd=tmp,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    return proc, endpoints, db


def wait_for(endpoints: Path, proc: subprocess.Popen[bytes], log: Path) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 180
    while not (endpoints.exists() and endpoints.stat().st_size):
        assert proc.poll() is None, log.read_text()
        assert time.monotonic() < deadline, "no endpoints file"
        time.sleep(0.2)
    return read_endpoints(endpoints)


async def client_a(url: str, token: str) -> dict[str, Any]:
    """Lists, reads the task, runs CELL, answers with the lab's g."""
    async with mcp_client(url, token) as c:
        tools = (await c.list_tools()).tools
        task = await c.get_prompt("task")
        r = await c.call_tool("run_python", {"code": CELL})
        args = {"description": "doubles its input", "domain": "all numbers", "code": "lab:g"}
        done = await c.call_tool("submit_answer", args)
    return {
        "tools": [(t.name, t.input_schema) for t in tools],
        "task": "\n".join(m.content.text for m in task.messages),  # type: ignore[union-attr]
        "cell": (r.content[0].text, r.is_error),  # type: ignore[union-attr]
        "submitted": done.content[0].text,  # type: ignore[union-attr]
    }


async def client_b(url: str, token: str) -> tuple[str, bool]:
    async with mcp_client(url, token) as c:
        r = await c.call_tool("run_python", {"code": OVER_BUDGET})
    return r.content[0].text, bool(r.is_error)  # type: ignore[union-attr]


def values(row: Any) -> list[Any]:
    """A stored call's outputs as a cell reads them (complex numbers as Python's)."""
    spec = call_commands(benchmark("numeric").commands)[0]
    got, _ = call_value(spec, [CallOutput.model_validate(o) for o in row.outputs])
    return [complex(*v["__complex__"]) if isinstance(v, dict) else v for v in got]


def test_cells_over_mcp_are_metered_recorded_and_budgeted(tmp_path: Path) -> None:
    proc, endpoints, db = serve(tmp_path)
    try:
        by_target = {e["target_id"]: e for e in wait_for(endpoints, proc, tmp_path / "serve.log")}
        a, b = (by_target[t] for t in TARGETS)
        seen_a = asyncio.run(client_a(a["url"], a["token"]))
        seen_b = asyncio.run(client_b(b["url"], b["token"]))
        assert proc.wait(timeout=300) == 0, (tmp_path / "serve.log").read_text()[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    store = Store(make_engine(f"sqlite:///{db}"))
    [run] = store.runs.latest()
    assert run.spec["protocol"]["mode"] == "code-tools"
    eps = {e.target_id: e for e in store.episodes.of_run(run.id)}

    # what the client is offered: the commands and run_python, and the lab in the task
    names = [s.name for s in benchmark("numeric").commands]
    assert [n for n, _ in seen_a["tools"]] == [*names, "run_python"]
    assert seen_a["tools"][-1][1] == RUN_PYTHON_SPEC.parameters
    assert "call the tool run_python" in seen_a["task"]

    # A: one cell, two target calls, stored under the cell's step after its one tool call
    text, is_error = seen_a["cell"]
    assert not is_error and text.startswith("Response: cell 1 ran (2 target calls).")
    [reply] = parse_cells(text)
    ep = eps[TARGETS[0]]
    calls = store.episodes.target_calls(ep.id)
    assert [c.inputs for c in calls] == [["1", "2", "3"], ["4"]]
    assert [c.idx for c in calls] == [1, 2] and calls[0].step == calls[1].step
    assert ast.literal_eval(reply.stdout.strip()) == values(calls[0])
    assert ast.literal_eval(reply.parts["value"]) == values(calls[1])[0]
    [cell] = store.lab.cells(ep.id)
    assert (cell.step, cell.idx, cell.number, cell.status) == (calls[0].step, 0, 1, "ok")
    assert (cell.first_call, cell.n_calls, cell.code) == (1, 2, CELL)
    assert seen_a["submitted"] == "answer submitted; the episode has ended"
    assert (ep.status, ep.end_reason) == ("completed", "submit_answer")
    assert (ep.target_calls, ep.inputs) == (2, 4)
    assert "def g(x):\n    return 2 * x" in (store.episodes.get(ep.id).final_answer or "")

    # B: the cell's fourth call is past the budget: refused in the cell, the three before it
    # stored, the episode ended after the cell, and its client told so
    text, is_error = seen_b
    assert is_error and text.startswith("episode ended: budget_exhausted"), text
    ep = eps[TARGETS[1]]
    assert (ep.status, ep.end_reason) == ("budget_exhausted", "target_calls")
    assert (ep.target_calls, ep.inputs) == (BUDGET, BUDGET)
    assert [c.inputs for c in store.episodes.target_calls(ep.id)] == [["0"], ["1"], ["2"]]
    [cell] = store.lab.cells(ep.id)
    assert (cell.status, cell.n_calls) == ("error", BUDGET)
    assert "BudgetExhausted" in (cell.error or "")
    [row] = store.episodes.tool_calls(ep.id)
    assert row.name == "run_python" and "raised an error (3 target calls)" in row.result
