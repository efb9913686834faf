"""Agents for the toy family: they call the target once on "Ab", name the mood they see and
answer with code that reproduces it. `ToyAgent` plays the text and `tools` protocol modes,
`ToyLabAgent` the lab's modes, `code` (a fenced cell) and `code-tools` (a `run_python` call).
Each reads what it needs back from the conversation, so a resumed episode goes on as it was."""

from __future__ import annotations

from typing import Any

from interp_harness.sdk import (
    RUN_PYTHON,
    Agent,
    AgentReply,
    Message,
    ToolCall,
    ToolSpec,
    cell_block,
    cell_stdouts,
    cells_sent,
    parse_cells,
    parse_pairs,
)

PROBE = "Ab"
CODE = {"shout": "def f(x):\n    return x.upper()", "whisper": "def f(x):\n    return x.lower()"}
# the lab cell: one call of the record's `call_function` command, its one output printed
CELL = f"from target import call_function\nprint(call_function([{PROBE!r}])[0])"


def mood_of(output: str | None) -> str:
    return "shout" if output == PROBE.upper() else "whisper"


def answer_text(mood: str) -> str:
    return f"[DESCRIPTION]: {mood}\n[CODE]: ```python\n{CODE[mood]}\n```"


def answer_call(mood: str, n: int) -> ToolCall:
    return ToolCall(
        id=f"toy_{n}", name="submit_answer", arguments={"description": mood, "code": CODE[mood]}
    )


class ToyAgent(Agent):
    name = "toy-agent"
    description = "the toy family's offline agent in the text and tools modes"
    families = frozenset({"toy"})
    supports_tools = True

    async def step(
        self, conversation: list[Message], tools: list[ToolSpec] | None = None, **_: Any
    ) -> AgentReply:
        said = [m for m in conversation if m.role == "assistant"]
        if not said:  # first step: one call of the target on the probe
            if tools:
                call = ToolCall(id="toy_0", name="call_function", arguments={"inputs": [PROBE]})
                return AgentReply(content="", tool_calls=[call])
            return AgentReply(content=f'PYTHON(./temp/function.py "{PROBE}")')
        pairs = dict(parse_pairs(conversation[-1].content, [PROBE]))
        mood = mood_of(pairs.get(PROBE))
        if tools:
            return AgentReply(content="", tool_calls=[answer_call(mood, 1)])
        return AgentReply(content=answer_text(mood))


class ToyLabAgent(Agent):
    name = "toy-lab-agent"
    description = "the toy family's offline agent in the code and code-tools modes (a lab cell)"
    families = frozenset({"toy"})
    supports_tools = True
    needs_lab = True

    async def step(
        self, conversation: list[Message], tools: list[ToolSpec] | None = None, **_: Any
    ) -> AgentReply:
        as_tools = any(t.name == RUN_PYTHON for t in tools or ())
        if cells_sent(conversation) == 0:
            if as_tools:
                call = ToolCall(id="toy_0", name=RUN_PYTHON, arguments={"code": CELL})
                return AgentReply(content="", tool_calls=[call])
            return AgentReply(content="One cell.\n" + cell_block(CELL))
        if as_tools:  # the run_python result: one cell's reply, read with parse_cells
            [cell] = parse_cells([m for m in conversation if m.role == "tool"][-1].content)
            return AgentReply(content="", tool_calls=[answer_call(mood_of(cell.stdout.strip()), 1)])
        outs = cell_stdouts(conversation)  # every cell answered so far, in order
        return AgentReply(content=answer_text(mood_of(outs[-1].strip() if outs else None)))
