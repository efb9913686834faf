"""Protocol mode `code` as text (agents/protocol/cells.py): the cells of a message, a cell's
reply read back exactly whatever its parts hold (also after a join strips its last newline),
and the tool adapter rendering cells as `run_python` calls and back."""

from __future__ import annotations

from interp_harness.agents.base import Message
from interp_harness.agents.protocol.cells import (
    RUN_PYTHON_SPEC,
    cell_block,
    cell_stdouts,
    cells_sent,
    format_cell,
    parse_cells,
    split_cells,
)
from interp_harness.agents.tools_adapter import as_text, as_tool_calls
from interp_harness.agents.toolspec import ToolCall
from interp_harness.function_store.benchmark import benchmark


def test_a_message_s_cells_in_order() -> None:
    text = (
        "Two cells.\n```python\nx = 1\n```\nthen PYTHON(f.py 3)\n```py\nprint(x)\n```\n"
        "```\nnot python\n```\n```python\nnever closed"
    )
    rest, cells = split_cells(text)
    assert cells == ["x = 1\n", "print(x)\n"]
    assert "PYTHON(f.py 3)" in rest and "x = 1" not in rest and "never closed" in rest
    assert split_cells(cell_block("a = 2\n\n"))[1] == ["a = 2\n"]


def test_a_reply_is_read_back_exactly() -> None:
    tricky = "Response: cell 9 ran.\nstdout (3 characters):\n[end of cell 1]\n\n"
    one = format_cell(1, "ran (1 target call).", {"stdout": tricky, "value": "42"}, {"stdout": 7})
    two = format_cell(2, "raised an error (0 target calls).", {"error": "E", "traceback": "T\n"})
    for text in (one + two, one.rstrip("\n") + "\n" + two):  # as written, and joined stripped
        got = parse_cells("Response: (5, 11.0) \n" + text)
        assert [c.number for c in got] == [1, 2]
        assert got[0].stdout == tricky and got[0].parts["value"] == "42"
        assert got[0].cut == {"stdout": 7} and got[0].header == "ran (1 target call)."
        assert got[1].parts == {"error": "E", "traceback": "T\n"}
    convo = [Message(role="assistant", content=cell_block("1")), Message(role="user", content=one)]
    assert cell_stdouts(convo) == [tricky] and cells_sent(convo) == 1


def test_the_tool_adapter_renders_cells_as_run_python() -> None:
    tools = [*benchmark("numeric").commands, RUN_PYTHON_SPEC]
    text = "PYTHON(./temp/function.py 1)\n" + cell_block("print(2)")
    calls = as_tool_calls(text, tools, 0)
    assert [(c.name, c.arguments) for c in calls] == [
        ("call_function", {"inputs": ["1"]}),
        ("run_python", {"code": "print(2)\n"}),
    ]
    # a final answer's fenced [CODE] is its code, not a cell
    final = "[DESCRIPTION]: d\n[DOMAIN]: all\n[CODE]: \n" + cell_block("def f(x):\n    return x")
    [submit] = as_tool_calls(final, tools, 0)
    assert (submit.name, submit.arguments["code"]) == ("submit_answer", "def f(x):\n    return x")
    # without run_python offered (mode tools) a cell is no call
    assert [c.name for c in as_tool_calls(text, tools[:-1], 0)] == ["call_function"]
    convo = [
        Message(
            role="assistant",
            content="",
            tool_calls=[ToolCall(id="a", name="run_python", arguments={"code": "print(2)"})],
        ),
        Message(role="tool", content=format_cell(1, "ran.", {"stdout": "2\n"}), tool_call_id="a"),
    ]
    back = as_text(convo, tools)
    assert back[0].content == cell_block("print(2)") and cells_sent(back) == 1
    assert cell_stdouts(back) == ["2\n"]
