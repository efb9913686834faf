"""Protocol mode `tools` for agents written for the text protocol (the scripted baselines): the
tool conversation is read as the text conversation it stands for, and the agent's text is sent
as the tool calls it stands for, both through the benchmark's declared rendering
(agents/protocol/tools.py). An episode then runs the same experiments in every mode, so the same
agent scores the same in `default`, `tools` and over MCP.

Subclass `TextProtocolAgent` and implement `text_step` instead of `step`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence

from interp_harness.agents.base import Agent, AgentReply, Message
from interp_harness.agents.protocol import command as text_command
from interp_harness.agents.protocol import function_path, parse_message, quote_input
from interp_harness.agents.protocol.cells import RUN_PYTHON, cell_block, split_cells
from interp_harness.agents.protocol.tools import (
    answer_spec,
    by_name,
    from_answer,
    match_words,
    to_answer,
    to_words,
)
from interp_harness.agents.toolspec import ToolCall, ToolSpec


def as_text(conversation: Sequence[Message], tools: Sequence[ToolSpec]) -> list[Message]:
    """The text-protocol conversation a tool conversation stands for: each tool call written as
    its `PYTHON(...)` command (or tagged answer), each run of tool results as one user reply."""
    specs = by_name(tools)
    path = function_path(conversation)
    out: list[Message] = []
    after_tool = False  # the last message written was a tool result: the next one joins it
    for m in conversation:
        if m.role == "tool":
            if after_tool:  # the text protocol answers a message's commands in one reply
                m = Message(role="user", content=out.pop().content.rstrip("\n") + "\n" + m.content)
            out.append(Message(role="user", content=m.content))
            after_tool = True
            continue
        after_tool = False
        if m.role == "assistant" and m.tool_calls:
            lines = []
            for c in m.tool_calls:
                spec = specs.get(c.name)
                if spec is None:
                    continue
                if spec.kind == "answer":
                    lines.append(to_answer(spec, c.arguments))
                elif spec.name == RUN_PYTHON:  # a lab cell: the text rendering's fenced block
                    lines.append(cell_block(str(c.arguments.get("code", ""))))
                else:
                    words = [quote_input(w) for w in to_words(spec, c.arguments)]
                    lines.append(text_command(path, words))
            out.append(Message(role="assistant", content="\n".join(lines)))
        else:
            out.append(Message(role=m.role, content=m.content))
    return out


def as_tool_calls(text: str, tools: Sequence[ToolSpec], first_id: int) -> list[ToolCall]:
    """The tool calls a text-protocol message stands for: its commands, then its lab cells as
    `run_python` calls when that tool is offered (protocol mode `code-tools`), or its final
    answer (ids `call_<n>` from `first_id`, so they are the same on every run of the episode)."""
    message, cells = text, []
    if any(t.name == RUN_PYTHON for t in tools):
        text, cells = split_cells(text)
    parsed = parse_message(text)
    submit = answer_spec(tools)
    if parsed.has_description and submit is not None:  # its fenced [CODE] is no cell
        arguments = from_answer(submit, message)
        return [ToolCall(id=f"call_{first_id}", name=submit.name, arguments=arguments)]
    calls = []
    for cmd in parsed.commands:
        call = match_words([t for t in tools if t.name != RUN_PYTHON], cmd.inputs)
        if call is not None:
            calls.append(call.model_copy(update={"id": f"call_{first_id + len(calls)}"}))
    for code in cells:
        calls.append(
            ToolCall(id=f"call_{first_id + len(calls)}", name=RUN_PYTHON, arguments={"code": code})
        )
    return calls


class TextProtocolAgent(Agent):
    """An agent written for the text protocol that also runs in protocol mode `tools`."""

    supports_tools = True

    async def step(  # type: ignore[override]
        self, conversation: list[Message], tools: Sequence[ToolSpec] | None = None
    ) -> AgentReply:
        if tools is None:
            return await self.text_step(conversation)
        reply = await self.text_step(as_text(conversation, tools))
        made = sum(len(m.tool_calls) for m in conversation)
        calls = as_tool_calls(reply.content, tools, made)
        return reply.model_copy(update={"content": "", "tool_calls": calls})

    @abstractmethod
    async def text_step(self, conversation: list[Message]) -> AgentReply:
        """The next text-protocol message, given the text conversation."""
