"""Test-only Inspect solvers and tasks, loaded by `inspect eval` in a subprocess (by file path).

- `scripted_calls`: a tiny Inspect solver passed with `--solver` (not our react): it finds the
  sample's tools in `state.tools`, calls each call tool once on INPUTS and then submits.
- `find_react_scripted` / `find_text_scripted`: `interp_harness/find` whose model is Inspect's
  mockllm with scripted outputs (a tool call, then the answer; a PYTHON(...) command, then the
  answer). mockllm's default output cannot be used offline: without a usage on the output it
  counts tokens with tiktoken's o200k_base, which it downloads.
- `fails_once`: a solver that fails while its marker file is absent (and creates it), for
  `inspect eval-set --retry-attempts`.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from inspect_ai import Task, task, task_with
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ModelOutput,
    ModelUsage,
    execute_tools,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolCall, ToolDef

from interp_harness._registry import find

INPUTS = ["3", "-2.5", "hello"]
CODE = "def f(x):\n    return x"
TEXT_COMMAND = "I will call the function.\nCOMMAND: PYTHON(./temp/function.py 3 -2.5 7)"
TEXT_ANSWER = (
    f"[DESCRIPTION]: returns its input\n[DOMAIN]: all numbers\n[CODE]: \n```python\n{CODE}\n```"
)
USAGE = ModelUsage(input_tokens=11, output_tokens=7, total_tokens=18)


def answer_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        name: CODE if name == "code" else "returns its input" for name in schema.get("required", [])
    }


@solver
def scripted_calls(repeat: int = 1) -> Solver:
    """Calls each call tool `repeat` times, one assistant message per call, then submits."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        defs = [ToolDef(t) for t in state.tools]
        calls = [
            ToolCall(id=f"c{i}-{r}", function=d.name, arguments={"inputs": INPUTS})
            for i, d in enumerate(defs)
            if d.name != "submit_answer"
            for r in range(repeat)
        ]
        submit = next(d for d in defs if d.name == "submit_answer")
        calls.append(
            ToolCall(
                id="s",
                function="submit_answer",
                arguments=answer_arguments(submit.parameters.model_dump()),
            )
        )
        for call in calls:  # one assistant message per call, as a model would
            state.messages.append(ChatMessageAssistant(content="", tool_calls=[call]))
            result = await execute_tools(state.messages, state.tools)
            state.messages.extend(result.messages)
        state.output = ModelOutput.from_content("scripted", state.messages[-1].text)
        return state

    return solve


def _assistants(messages: list[ChatMessage]) -> int:
    return sum(isinstance(m, ChatMessageAssistant) for m in messages)


def react_script(
    messages: list[ChatMessage], tools: Any, tool_choice: Any, config: Any
) -> ModelOutput:
    if _assistants(messages) == 0:
        out = ModelOutput.for_tool_call("mockllm/model", "call_function", {"inputs": INPUTS})
    else:
        schema = next(t for t in tools if t.name == "submit_answer").parameters.model_dump()
        out = ModelOutput.for_tool_call("mockllm/model", "submit_answer", answer_arguments(schema))
    out.usage = USAGE
    return out


def text_script(
    messages: list[ChatMessage], tools: Any, tool_choice: Any, config: Any
) -> ModelOutput:
    content = TEXT_COMMAND if _assistants(messages) == 0 else TEXT_ANSWER
    out = ModelOutput.from_content("mockllm/model", content)
    out.usage = USAGE
    return out


@task
def find_react_scripted(family: str = "numeric", limit: int = 2) -> Task:
    return task_with(
        find(family=family, limit=limit, max_rounds=4),
        model=get_model("mockllm/model", custom_outputs=react_script),
    )


@task
def find_text_scripted(family: str = "numeric", limit: int = 2) -> Task:
    return task_with(
        find(family=family, limit=limit, protocol="text", max_rounds=4),
        model=get_model("mockllm/model", custom_outputs=text_script),
    )


@task
def find_react_one_round() -> Task:
    """react with a round cap of 1 against a model that calls, then would submit."""
    return task_with(
        find(family="numeric", limit=1, max_rounds=1),
        model=get_model("mockllm/model", custom_outputs=react_script),
    )


@task
def find_call_budget() -> Task:
    """A budget of one target call against a solver that makes two."""
    return task_with(
        find(family="numeric", limit=1, max_target_calls=1), solver=scripted_calls(repeat=2)
    )


@solver
def fails_once() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        marker = Path(os.environ["INTERP_HARNESS_TEST_MARKER"])
        if not marker.exists():
            marker.write_text("failed once")
            raise RuntimeError("deliberate failure of the first attempt")
        state.output = ModelOutput.from_content("scripted", "[DESCRIPTION]: x")
        return state

    return solve


@solver
def hangs_after_a_call() -> Solver:
    """One target call (its service starts), a marker file, then waits to be killed."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        call = next(ToolDef(t) for t in state.tools if ToolDef(t).name != "submit_answer")
        state.messages.append(
            ChatMessageAssistant(
                content="",
                tool_calls=[ToolCall(id="c", function=call.name, arguments={"inputs": INPUTS})],
            )
        )
        state.messages.extend((await execute_tools(state.messages, state.tools)).messages)
        Path(os.environ["INTERP_HARNESS_TEST_MARKER"]).write_text("called")
        await asyncio.sleep(3600)
        return state

    return solve


TEXTS = ["The cat sat on the mat.", "Paris is the capital of France."]


def filled(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for any of our tools: each required list gets TEXTS, each other value a text."""
    props = schema.get("properties", {})
    return {
        name: TEXTS if props.get(name, {}).get("type") == "array" else "it fires on animals"
        for name in schema.get("required", [])
    }


@solver
def calls_each_tool_once() -> Solver:
    """Each call tool once with `filled` arguments, then submit_answer: any benchmark's tools."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        defs = sorted((ToolDef(t) for t in state.tools), key=lambda d: d.name == "submit_answer")
        for i, d in enumerate(defs):
            args = filled(d.parameters.model_dump(exclude_none=True))
            call = ToolCall(id=f"c{i}", function=d.name, arguments=args)
            state.messages.append(ChatMessageAssistant(content="", tool_calls=[call]))
            state.messages.extend((await execute_tools(state.messages, state.tools)).messages)
        state.output = ModelOutput.from_content("scripted", state.messages[-1].text)
        return state

    return solve
