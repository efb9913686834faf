"""An agent for the progress tests, loadable by dotted path (`progress_agents:SlowStartAgent`);
it imports only `agents`, as a module an agent host loads must."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from interp_harness.agents.base import Agent, AgentOptions, AgentReply, Message

DIR = "./temp/function.py"


class SlowStartOptions(AgentOptions):
    start_s: float = 0.0  # how long building the agent takes (its host is "starting" meanwhile)
    n_calls: int = 3
    delay: float = 0.0  # seconds per step


class SlowStartAgent(Agent):
    """Takes `start_s` to build, then calls the function on 0, 1, ... (one input per round,
    `delay` seconds per step, `n_calls` rounds) and answers."""

    name = "progress-slow-start"
    Options = SlowStartOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        time.sleep(float(options.get("start_s", 0)))

    async def step(self, conversation: list[Message]) -> AgentReply:
        await asyncio.sleep(float(self.options.get("delay", 0)))
        k = sum(m.role == "assistant" for m in conversation)
        if k < int(self.options.get("n_calls", 3)):
            return AgentReply(content=f"COMMAND: PYTHON({DIR} {k})")
        return AgentReply(content="[DESCRIPTION]: the identity\n[CODE]: def f(x): return x")
