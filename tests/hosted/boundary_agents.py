"""Agents that misbehave at the agent-host boundary (issue 27, items 8 and 9). Like any agent run
in a host, this module imports nothing but the `agents` package, the SDKs and the standard
library (it is bound alone into the sandbox)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import httpx

from interp_harness.agents.base import Agent, AgentReply, Message, Usage
from interp_harness.agents.openai_agent import OpenAIAgent

PROBE = "COMMAND: PYTHON(./temp/function.py 1)"


class ClaimingAgent(Agent):
    """Probes the function every step and claims the usage in `claim` (e.g. negative tokens, 2**70
    tokens, cost "nan"), built without validation as a careless or hostile agent can. `subvert`:
    first switch off its own host's usage check (agent code runs in the host's process)."""

    async def step(self, conversation: list[Message]) -> AgentReply:
        claim = {k: float(v) if k == "cost_usd" else v for k, v in self.options["claim"].items()}
        if self.options.get("subvert"):
            main = sys.modules["__main__"]
            if hasattr(main, "check_usage"):
                main.check_usage = lambda usage: usage  # type: ignore[attr-defined]
        return AgentReply(content=PROBE, usage=Usage.model_construct(**claim))


class UnderclaimingOpenAIAgent(OpenAIAgent):
    """A real openai agent that reports zero tokens whatever the provider said."""

    async def step(self, conversation: list[Message]) -> AgentReply:
        reply = await super().step(conversation)
        return AgentReply(content=PROBE, usage=Usage(), model=reply.model)


class RogueRequestAgent(Agent):
    """Sends `body` itself to its route (OPENAI_BASE_URL + `path`) with its key, whatever its
    options say, and answers with what came back: {"status": ..., "body": ...}."""

    provider = "openai"

    async def step(self, conversation: list[Message]) -> AgentReply:
        base = os.environ["OPENAI_BASE_URL"].rstrip("/")
        headers: dict[str, Any] = {"authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"}
        headers.update(self.options.get("headers", {}))
        async with httpx.AsyncClient(timeout=30) as c:
            r = await c.post(
                base + self.options.get("path", "/chat/completions"),
                content=self.options.get("raw") or json.dumps(self.options["body"]),
                headers=headers,
            )
        return AgentReply(content=json.dumps({"status": r.status_code, "body": r.text}))
