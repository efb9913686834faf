"""A test-only Inspect solver for protocol "code", loaded by `inspect eval --solver` in a
subprocess (by file path): it finds `run_python` among the sample's tools in `state.tools`, runs
two cells (the second uses the first's variables and runs into max_target_calls, which it
catches) and submits the lab's function `g` as the code (`lab:g`)."""

from __future__ import annotations

from inspect_ai.model import ChatMessageAssistant, ModelOutput, execute_tools
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolCall

FIRST = """from target import call_function, f
ys = call_function([1, 2, 3])
print(repr(ys))
def g(x):
    return 2 * x
f(4)
"""
SECOND = """from target import BudgetExhausted
print(len(ys), g(21))
try:
    for x in range(5):
        f(x)
except BudgetExhausted as e:
    print("budget:", e)
"""
ANSWER = {"description": "doubles its input", "domain": "all numbers", "code": "lab:g"}


@solver
def code_cells() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        steps = [("run_python", {"code": FIRST}), ("run_python", {"code": SECOND})]
        steps.append(("submit_answer", ANSWER))
        for i, (name, arguments) in enumerate(steps):  # one assistant message per call
            call = ToolCall(id=f"c{i}", function=name, arguments=arguments)
            state.messages.append(ChatMessageAssistant(content="", tool_calls=[call]))
            state.messages.extend((await execute_tools(state.messages, state.tools)).messages)
        state.output = ModelOutput.from_content("scripted", state.messages[-1].text)
        return state

    return solve
