"""Agents for the lab tests, loadable by dotted path (`lab_test_agents:CellScriptAgent`); like
every hosted agent module they import only the `agents` package."""

from __future__ import annotations

from interp_harness.agents.base import Agent, AgentOptions, AgentReply, Message


class CellScriptOptions(AgentOptions):
    messages: list[str] = []  # the assistant messages, in order; past the end: `answer`
    answer: str = "[DESCRIPTION]: done"


class CellScriptAgent(Agent):
    """Sends `messages[k]` as its k-th message, then `answer`. Keeps what it was sent last."""

    name = "cell-script"
    Options = CellScriptOptions
    seen: list[list[Message]] = []  # every conversation it was given (class-wide)

    async def step(self, conversation: list[Message]) -> AgentReply:
        CellScriptAgent.seen.append(list(conversation))
        k = sum(m.role == "assistant" for m in conversation)
        messages = self.options.get("messages", [])
        if k < len(messages):
            return AgentReply(content=messages[k])
        return AgentReply(content=self.options.get("answer", "[DESCRIPTION]: done"))
