"""Test-only pieces the Ray workers import by name (tests/scale_out is on their PYTHONPATH):
a cheap score hook and a slower scripted agent (so that a worker can be killed mid-episode)."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import Field

from agents.base import AgentError, AgentReply, Message
from agents.scripted_numeric import ScriptedNumericAgent, ScriptedNumericOptions
from evaluator.api import EpisodeStats, ScoreResult
from function_store.models import Target


async def answer_stats(target: Target, answer: str, stats: EpisodeStats) -> list[ScoreResult]:
    """Scores that depend on the whole episode (its answer and usage), cheap to compute: the
    evaluator's own scoring runs agent code in a sandbox per episode, too slow for this test."""
    return [
        ScoreResult(metric="answer_chars", value=float(len(answer))),
        ScoreResult(metric="calls", value=float(stats.target_calls)),
        ScoreResult(metric="inputs", value=float(stats.inputs)),
    ]


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
            import harness  # noqa: F401
        except ImportError:
            pass
        else:
            raise AgentError("not in an agent host: `harness` is importable", category="agent")
        await asyncio.sleep(self.delay_s)
        return await super().step(conversation)
