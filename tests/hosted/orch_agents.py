"""Agents for the orchestrator tests, loadable by dotted path (`orch_agents:ProbeAgent`).

They live apart from `orch_plugin` because an agent host can import only the `agents` package and
the agent's own module: this module must not import harness, function_store or evaluator.
"""

from __future__ import annotations

import asyncio
import re

from interp_harness.agents.base import Agent, AgentError, AgentOptions, AgentReply, Message, Usage

DIR = "./temp/function.py"


# ---- agents ---------------------------------------------------------------------------------
def _rounds(conversation: list[Message]) -> int:
    return sum(m.role == "assistant" for m in conversation)


class ProbeOptions(
    AgentOptions
):  # what a REST caller may set (interp_harness.agents.base.Agent.Options)
    n_calls: int = 3
    delay: float = 0.0


class ProbeAgent(Agent):
    """Calls the function on 0, 1, 2, ... (one input per round, `n_calls` rounds), then answers.

    The message depends only on the conversation, so a resumed episode continues identically.
    Options: n_calls (default 3), delay (seconds per step, default 0).
    """

    name = "orch-probe"
    Options = ProbeOptions
    provider = "orch-local"

    async def step(self, conversation: list[Message]) -> AgentReply:
        delay = float(self.options.get("delay", 0))
        if delay:
            await asyncio.sleep(delay)
        k = _rounds(conversation)
        if k < int(self.options.get("n_calls", 3)):
            text = f"Let me test x={k}.\nCOMMAND: PYTHON({DIR} {k})"
        else:
            seen = re.findall(r"\(([-\d.]+), ([-\d.e]+)\)", conversation[-1].content)
            text = f"[DESCRIPTION]: affine map; last pair {seen}\n[CODE]: ```python\ndef f(x):\n    return x\n```"
        return AgentReply(
            content=text, usage=Usage(prompt_tokens=10, completion_tokens=5, cost_usd=0.001)
        )


class SlowProviderAgent(ProbeAgent):
    """ProbeAgent under another provider name (per-provider concurrency tests)."""

    provider = "orch-slow"


class SilentAgent(Agent):
    """Never sends a command nor a description."""

    provider = "orch-local"

    async def step(self, conversation: list[Message]) -> AgentReply:
        return AgentReply(
            content="I am thinking.", usage=Usage(prompt_tokens=3, completion_tokens=2)
        )


class TwoCommandsAgent(Agent):
    """Two commands in one message, then an answer."""

    provider = "orch-local"

    async def step(self, conversation: list[Message]) -> AgentReply:
        if _rounds(conversation) == 0:
            return AgentReply(content=f"PYTHON({DIR} 1 2) and PYTHON({DIR} 3)")
        return AgentReply(content="[DESCRIPTION]: done")


class FailingAgent(Agent):
    """Fails persistently on its second message. Its own claim of a provider failure would be
    relabelled `agent` (no provider failure seen: tests/harness/agent_host/test_error_category.py), so
    it raises an agent error."""

    provider = "orch-local"

    async def step(self, conversation: list[Message]) -> AgentReply:
        if _rounds(conversation) >= 1:
            raise AgentError("provider said: insufficient credits", category="agent")
        return AgentReply(content=f"PYTHON({DIR} 1)")


class EchoAgent(Agent):
    """Records what it was shown (class-level, for in-process tests), then answers."""

    provider = "orch-local"
    seen: list[list[Message]] = []

    async def step(self, conversation: list[Message]) -> AgentReply:
        EchoAgent.seen.append(list(conversation))
        if _rounds(conversation) == 0:
            return AgentReply(content=f"PYTHON({DIR} Paris dog)")
        return AgentReply(content="[DESCRIPTION]: long words")


class ZeroLatencyAgent(Agent):
    """Benchmark agent: one command per round forever (the round cap ends the episode)."""

    provider = "bench"

    async def step(self, conversation: list[Message]) -> AgentReply:
        return AgentReply(content=f"PYTHON({DIR} {len(conversation)} 1 2)")
