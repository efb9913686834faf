"""The offline baselines that send a fixed list of probes, a chunk a round, then describe f by
what they saw (`scripted-entities`, `scripted-relations`, `scripted-neuron`)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import ClassVar

from interp_harness.agents.base import AgentReply, Message
from interp_harness.agents.protocol import Observation, next_chunk, observations
from interp_harness.agents.tools_adapter import TextProtocolAgent


class FixedProbesAgent(TextProtocolAgent):
    """Sends `probes`, `chunk` a round, then answers with `describe(observations)`. Stateless
    between steps: a resumed episode continues where it stopped."""

    probes: ClassVar[Sequence[str]] = ()
    chunk: ClassVar[int] = 1

    async def text_step(self, conversation: list[Message]) -> AgentReply:
        cmd = next_chunk(conversation, self.probes, self.chunk)
        if cmd is not None:
            return AgentReply(content=cmd)
        obs, _ = observations(conversation)
        return AgentReply(content=self.describe(obs))

    @abstractmethod
    def describe(self, obs: list[Observation]) -> str:
        """The final answer, from every (input, output) pair seen."""
