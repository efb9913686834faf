"""An agent for the toy family: calls the target once and names the mood it sees."""

from __future__ import annotations

import re

from interp_harness.sdk import Agent, AgentReply


class ToyAgent(Agent):
    name = "toy-agent"

    async def step(self, messages):  # type: ignore[no-untyped-def, override]
        last = messages[-1].content if messages else ""
        if "PYTHON(" not in "".join(m.content for m in messages if m.role == "assistant"):
            return AgentReply(content='PYTHON(./temp/function.py "Ab")')
        m = re.search(r"\(Ab, (\w+)\)", last)
        mood = "shout" if m and m.group(1) == "AB" else "whisper"
        return AgentReply(content=f"[DESCRIPTION]: {mood}")
