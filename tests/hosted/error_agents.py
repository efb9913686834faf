"""Agents for the error-reporting tests (issue 29 §2). Like any agent run in a host, this module
imports nothing but the `agents` package and the standard library (it is bound alone into the
sandbox)."""

from __future__ import annotations

import os

from interp_harness.agents.base import Agent, AgentReply, Message


def _fail_deep(n_messages: int) -> AgentReply:
    # everything the host's process holds in its environment, and HTML, in the exception's text:
    # the traceback is agent text, shown escaped, and the host holds no operator secret
    seen = " ".join(f"{k}={v}" for k, v in sorted(os.environ.items()))
    raise ValueError(f"boom <b>bold</b> after {n_messages} messages; env: {seen}")


class RaisingAgent(Agent):
    """Raises on its first step, two frames down."""

    name = "raising"

    async def step(self, conversation: list[Message]) -> AgentReply:
        return _fail_deep(len(conversation))
