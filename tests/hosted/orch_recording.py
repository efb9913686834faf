"""A test agent that records every step it is asked for (loadable by dotted path
`orch_recording:RecordingAgent`; like orch_agents, it imports nothing of the harness).

Each call of `step` appends one JSON line to the file named by the `record` option, before the
agent does anything else: the process id, the time, the round and a digest of the conversation.
The message depends only on the conversation, so a resumed episode continues identically, and
from the second step on the digest names the episode (the replies carry its target's outputs).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time

from interp_harness.agents.base import Agent, AgentOptions, AgentReply, Message, Usage

DIR = "./temp/function.py"


class RecordingOptions(AgentOptions):
    record: str = ""  # the file each step call is appended to
    n_calls: int = 3
    delay: float = 0.0  # seconds each step takes
    hang: bool = False  # the step never returns


def digest(conversation: list[Message]) -> str:
    text = "\x00".join(f"{m.role}:{m.content}" for m in conversation)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class RecordingAgent(Agent):
    name = "orch-recording"
    Options = RecordingOptions
    provider = "orch-local"

    async def step(self, conversation: list[Message]) -> AgentReply:
        k = sum(m.role == "assistant" for m in conversation)
        path = self.options.get("record")
        if path:
            line = {"pid": os.getpid(), "t": time.time(), "k": k, "conv": digest(conversation)}
            with open(path, "a") as f:
                f.write(json.dumps(line) + "\n")
        if self.options.get("hang"):
            await asyncio.Event().wait()  # never set: the step never returns
        delay = float(self.options.get("delay", 0))
        if delay:
            await asyncio.sleep(delay)
        if k < int(self.options.get("n_calls", 3)):
            text = f"Let me test x={k}.\nCOMMAND: PYTHON({DIR} {k})"
        else:
            text = "[DESCRIPTION]: an affine map\n[CODE]: ```python\ndef f(x):\n    return x\n```"
        return AgentReply(
            content=text, usage=Usage(prompt_tokens=10, completion_tokens=5, cost_usd=0.001)
        )
