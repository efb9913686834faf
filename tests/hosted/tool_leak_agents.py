"""A tools-mode agent that sends adversarial tool calls (loadable by dotted path; imports only
`agents`). The calls are the leak audit's adversarial commands as `call_function` inputs, plus
unknown tools and malformed arguments; then an answer whose code tries to escape."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from interp_harness.agents.base import Agent, AgentReply, Message
from interp_harness.agents.toolspec import ToolCall, ToolSpec


def adversarial_calls(texts: Sequence[str], mark: str) -> list[list[dict[str, Any]]]:
    calls: list[dict[str, Any]] = []
    for t in texts:
        calls.append({"name": "call_function", "arguments": {"inputs": [t]}})
        calls.append({"name": "call_function", "arguments": {"inputs": t.split()[:5000]}})
    calls += [
        {"name": "../../etc/passwd", "arguments": {}},
        {"name": "__import__('os').system('id')", "arguments": {"x": f"$(touch {mark}-tool)"}},
        {"name": "call_function", "arguments": {"inputs": [{"$ref": "/proc/self/environ"}]}},
        {"name": "call_function", "arguments": {"inputs": ["1"], "path": "/sandbox"}},
        {"name": "submit_answer", "arguments": {"description": 1}},
        # lone surrogates (non-UTF-8 bytes) and NUL, which options may not carry
        {"name": "call_function", "arguments": {"inputs": ["\udcff\udcfe", "\x00", "\u202e1"]}},
    ]
    return [calls[i : i + 60] for i in range(0, len(calls), 60)]


class AdversarialToolsAgent(Agent):
    name = "adversarial-tools"
    provider = "local"
    supports_tools = True

    async def step(
        self, conversation: list[Message], tools: Sequence[ToolSpec] | None = None
    ) -> AgentReply:
        k = sum(m.role == "assistant" for m in conversation)
        batches = adversarial_calls(self.options["texts"], self.options["mark"])
        if k < len(batches):
            calls = [ToolCall(id=f"a{k}_{i}", **c) for i, c in enumerate(batches[k])]
            return AgentReply(content="", tool_calls=calls)
        code = f"import os\nos.system('touch {self.options['mark']}-code')\ndef f(x):\n    return x"
        answer = {"description": "x", "domain": "all", "code": code}
        return AgentReply(
            content="", tool_calls=[ToolCall(id="end", name="submit_answer", arguments=answer)]
        )
