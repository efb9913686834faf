"""Protocol modes `code` and `code-tools` in the episode loop (SQLite, in-process scheduler and
agents, the orch-test targets f(x) = 2x + 1, a real bwrap lab): a cell's target calls are
recorded and counted like commands, with the values the text reply shows; the budget holds in a
cell; a tool call of `run_python` runs a cell; an answer may name a function of the lab; an
agent that writes cells is refused outside these modes."""

from __future__ import annotations

import orch_plugin  # noqa: F401  (registers the orch-test targets)
import pytest
from lab_test_agents import CellScriptAgent
from support.orch_helpers import run_in_process

from interp_harness.agents.protocol import parse_answer, parse_pairs
from interp_harness.agents.protocol.cells import parse_cells
from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.runs.admission import create_run
from interp_harness.harness.runs.selection import SelectionError
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

pytestmark = pytest.mark.usefixtures("needs_bwrap")
F0 = "orch-test/numeric/f00000"  # f(x) = 2x + 1


def cell(code: str) -> str:
    return f"```python\n{code}\n```"


def spec(messages: list[str], answer: str = "[DESCRIPTION]: affine", **kw) -> dict:  # type: ignore[type-arg]
    return {
        "agent": "lab_test_agents:CellScriptAgent",
        "dataset": "orch-test",
        "ids": [F0],
        "agent_options": {"messages": messages, "answer": answer},
        "protocol": {"mode": "code"},
        "floor": False,
        **kw,
    }


async def test_cell_calls_are_recorded_and_counted_like_commands(sqlite_url: str) -> None:
    first = (
        "Both ways.\nPYTHON(./temp/function.py 5)\n"
        + cell("from target import call_function, f\nys = call_function([0, 1.5, 'x'])\nprint(ys)")
        + "\n"
        + cell("'no call'")
    )
    store, [run] = await run_in_process(
        sqlite_url, spec([first, cell("f(3)")]), agent_isolation="none"
    )
    assert run.status == "completed"
    [ep] = store.episodes.of_run(run.id)
    rows = [(c.step, c.idx, c.inputs) for c in store.episodes.target_calls(ep.id)]
    # the command first (idx 0), then the cells' calls numbered after the message's commands
    assert rows == [(2, 0, ["5"]), (2, 1, ["0", "1.5", "x"]), (4, 0, ["3"])]
    assert (ep.status, ep.rounds, ep.target_calls, ep.inputs) == ("completed", 3, 3, 5)
    cells = store.lab.cells(ep.id)
    assert [(c.step, c.idx, c.number, c.status, c.first_call, c.n_calls) for c in cells] == [
        (2, 0, 1, "ok", 1, 1),
        (2, 1, 2, "ok", 2, 0),
        (4, 0, 3, "ok", 0, 1),
    ]
    msgs = store.episodes.messages(ep.id)
    reply = msgs[3].content
    assert reply.startswith("Response: Function input - output pairs: (5, 11.0) \n")
    [c1, c2] = parse_cells(reply)
    assert (c1.number, c1.header) == (1, "ran (1 target call).")
    assert c1.stdout == "[1.0, 4.0, None]\n" and cells[0].stdout == c1.stdout
    assert c2.parts["value"] == "'no call'"
    # the values a cell got are the ones the text reply prints for the same inputs
    stored = store.episodes.target_calls(ep.id)[1]
    text_reply = f"Response: Function input - output pairs: ({stored.outputs[0]['input']}, "
    assert text_reply + "1.0)" in _format(stored.outputs)
    assert "could not convert" in cells[0].stderr  # the failed input's reason, on stderr
    assert parse_cells(msgs[5].content)[0].parts["value"] == "7.0"
    assert "In this session you also have a Python lab" in msgs[1].content


def _format(outputs: list[dict]) -> str:  # type: ignore[type-arg]
    from interp_harness.agents.protocol import format_reply
    from interp_harness.function_store.models import CallOutput

    text = format_reply([CallOutput.model_validate(o) for o in outputs])
    assert [y for _, y in parse_pairs(text, [o["input"] for o in outputs])][:2] == ["1.0", "4.0"]
    return text


async def test_the_target_call_budget_holds_inside_a_cell(sqlite_url: str) -> None:
    loop = (
        "from target import f, BudgetExhausted\nfor i in range(10):\n    try:\n        f(i)\n"
        "    except BudgetExhausted as e:\n        print('stopped at', i, e)\n        break"
    )
    store, [run] = await run_in_process(
        sqlite_url,
        spec([cell(loop), cell("f(1)")], budgets={"max_target_calls": 3}),
        agent_isolation="none",
    )
    [ep] = store.episodes.of_run(run.id)
    assert (ep.status, ep.end_reason, ep.target_calls) == ("budget_exhausted", "target_calls", 3)
    assert [c.inputs for c in store.episodes.target_calls(ep.id)] == [["0"], ["1"], ["2"]]
    [row] = store.lab.cells(ep.id)  # the cell is stored though no reply was
    assert row.n_calls == 3 and "stopped at 3" in row.stdout
    assert [m.role for m in store.episodes.messages(ep.id)][-1] == "assistant"


async def test_a_cell_reaches_no_other_command_or_target(sqlite_url: str) -> None:
    code = (
        "import labchannel\nfor command, args in [\n"
        "    ('call_function', {'inputs': ['1'], 'target': 'orch-test/numeric/f00001'}),\n"
        "    ('submit_answer', {'description': 'x'}),\n"
        "    ('read_store', {}),\n"
        "    ('call_function', {'inputs': 'not a list'}),\n]:\n"
        "    try:\n        labchannel.call(command, args)\n    except labchannel.TargetError as e:\n"
        "        print(command, '->', str(e)[:60])"
    )
    store, [run] = await run_in_process(sqlite_url, spec([cell(code)]), agent_isolation="none")
    [ep] = store.episodes.of_run(run.id)
    [row] = store.lab.cells(ep.id)
    lines = row.stdout.splitlines()
    assert len(lines) == 4, row.stdout
    assert lines[0].startswith("call_function -> invalid arguments for call_function")
    assert lines[1].startswith("submit_answer -> unknown command 'submit_answer'")
    assert lines[2].startswith("read_store -> unknown command")
    assert store.episodes.target_calls(ep.id) == [] and ep.target_calls == 0


async def test_an_answer_may_name_a_function_of_the_lab(sqlite_url: str) -> None:
    define = cell(
        "import numpy as np\na, b = 2.0, 1.0\nknots = np.array([0.0, 1.0])\n"
        "def helper(x):\n    return a * np.asarray(x)\ndef f(x):\n    return helper(x) + b + 0 * knots[0]"
    )
    answer = "[DESCRIPTION]: affine\n[DOMAIN]: all\n[CODE]: lab:f"
    store, [run] = await run_in_process(
        sqlite_url, spec([define], answer=answer), agent_isolation="none"
    )
    [ep] = store.episodes.of_run(run.id)
    final = ep.final_answer or ""
    assert "[CODE]: \n```python\n" in final and "lab:f" not in final
    assert "a = 2.0" in final and "b = 1.0" in final and "import numpy as np" in final
    assert "knots = numpy.array([0.0, 1.0], dtype='float64')" in final
    assert final.index("import numpy as np") < final.index("def helper(x)") < final.index("def f")
    code = final.split("```python\n", 1)[1].split("```", 1)[0]
    scope: dict = {}  # type: ignore[type-arg]
    exec(code, scope)  # the submitted source stands alone
    assert scope["f"](3) == 7.0
    # a name the lab does not hold is submitted as a comment saying why (the agent's failure)
    store2, [run2] = await run_in_process(
        sqlite_url, spec([define], answer=answer.replace("lab:f", "lab:g")), agent_isolation="none"
    )
    [ep2] = store2.episodes.of_run(run2.id)
    assert "# lab:g could not be submitted: no variable named 'g'" in (ep2.final_answer or "")


async def test_run_python_tool_calls_run_cells(sqlite_url: str) -> None:
    script = [
        [
            {"name": "call_function", "arguments": {"inputs": ["1"]}},
            {"name": "run_python", "arguments": {"code": "from target import f\nv = f(2)\nv"}},
        ],
        [
            {
                "name": "submit_answer",
                "arguments": {"description": "affine", "domain": "all", "code": "lab:g"},
            }
        ],
    ]
    code_tools = {
        "agent": "tool_agents:ScriptedToolsAgent",
        "dataset": "orch-test",
        "ids": [F0],
        "agent_options": {"script": script},
        "protocol": {"mode": "code-tools"},
        "floor": False,
    }
    store, [run] = await run_in_process(sqlite_url, code_tools, agent_isolation="none")
    [ep] = store.episodes.of_run(run.id)
    assert [(c.step, c.idx, c.inputs) for c in store.episodes.target_calls(ep.id)] == [
        (2, 0, ["1"]),
        (2, 2, ["2"]),  # after the message's two tool calls
    ]
    [row] = store.lab.cells(ep.id)
    assert (row.step, row.idx, row.first_call, row.n_calls, row.value) == (2, 1, 2, 1, "5.0")
    tools = [m for m in store.episodes.messages(ep.id) if m.role == "tool"]
    assert parse_cells(tools[1].content)[0].parts["value"] == "5.0"
    assert [r.name for r in store.episodes.tool_calls(ep.id)] == [
        "call_function",
        "run_python",
        "submit_answer",
    ]
    assert "# lab:g could not be submitted" in (ep.final_answer or "")
    assert "run_python" in store.episodes.messages(ep.id)[1].content


def test_an_agent_that_writes_cells_needs_a_code_mode(sqlite_url: str) -> None:
    store = Store(make_engine(sqlite_url))
    with pytest.raises(SelectionError, match="use protocol mode 'code' or 'code-tools'"):
        create_run(
            store,
            RunSpec(agent="scripted-numeric-code", dataset="orch-test", ids=[F0]),
            CatalogCache(),
        )
    with pytest.raises(SelectionError, match="does not support protocol mode 'tools'"):
        create_run(
            store,
            RunSpec(
                agent="lab_test_agents:CellScriptAgent",
                dataset="orch-test",
                ids=[F0],
                protocol={"mode": "code-tools"},
            ),
            CatalogCache(),
        )
    assert CellScriptAgent.needs_lab is False  # a plain agent may run in mode code


@pytest.mark.parametrize("mode", ["code", "code-tools"])
async def test_the_scripted_code_baseline_in_both_modes(sqlite_url: str, mode: str) -> None:
    spec = {
        "agent": "scripted-numeric-code",
        "dataset": "orch-test",
        "ids": [F0],
        "protocol": {"mode": mode},
        "floor": False,
    }
    store, [run] = await run_in_process(sqlite_url, spec, agent_isolation="none")
    [ep] = store.episodes.of_run(run.id)
    # the text baseline's batches, from one cell: its 5 calls and 464 inputs, in two rounds
    assert (ep.status, ep.rounds, ep.target_calls, ep.inputs) == ("completed", 2, 5, 464)
    [row] = store.lab.cells(ep.id)
    assert (row.status, row.n_calls) == ("ok", 5)
    code = parse_answer(ep.final_answer or "").code
    scope: dict = {}  # type: ignore[type-arg]
    exec(code, scope)  # the fit of the samples the cell printed: f(x) = 2x + 1
    assert abs(float(scope["f"](3.0)) - 7.0) < 1e-6, ep.final_answer


async def test_a_cell_stops_at_the_episode_s_wall_time_budget(sqlite_url: str) -> None:
    sleeper = cell("import time\ntime.sleep(60)\n'woke'")
    store, [run] = await run_in_process(
        sqlite_url, spec([sleeper], budgets={"max_wall_s": 4}), agent_isolation="none"
    )
    [ep] = store.episodes.of_run(run.id)
    assert (ep.status, ep.end_reason) == ("budget_exhausted", "wall_time")
    [row] = store.lab.cells(ep.id)  # stopped at the time the episode had left, not at 60 s
    assert row.status == "error" and "wall-time limit" in (row.error or ""), row
