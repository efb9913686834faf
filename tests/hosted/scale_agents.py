"""The scale-out tests' agent: it runs inside agent hosts, so it imports `agents` only."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import Field

from interp_harness.agents.base import AgentError, AgentReply, Message
from interp_harness.agents.scripted_numeric import ScriptedNumericAgent, ScriptedNumericOptions


class SlowOptions(ScriptedNumericOptions):
    delay_s: float = Field(0.0, ge=0, le=10)


class SlowScriptedNumeric(ScriptedNumericAgent):
    """scripted-numeric, waiting `delay_s` before each message (same messages otherwise), and
    failing when it does not run in a sandboxed agent host."""

    name = "slow-scripted-numeric"
    Options = SlowOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.delay_s = float(options.get("delay_s", 0.0))

    async def step(self, conversation: list[Message]) -> AgentReply:
        try:  # inside an agent host the orchestrator's packages are not importable
            import interp_harness.harness  # noqa: F401
        except ImportError:
            pass
        else:
            raise AgentError("not in an agent host: `harness` is importable", category="agent")
        await asyncio.sleep(self.delay_s)
        return await super().step(conversation)
