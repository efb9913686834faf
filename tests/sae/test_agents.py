"""The SAE baselines read the neuron reply format and rank tokens by their largest activation
(`scripted-sae`) or by how often they activate (`sae-frequent-tokens`, the floor)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from interp_harness.agents.base import Message
from interp_harness.agents.protocol import Observation, command_inputs, format_reply
from interp_harness.agents.registry import get_agent
from interp_harness.agents.scripted_sae import top_tokens

OBS = [
    Observation(x="a", y="The(0.00) cat(5.00) sat(0.00) [max 5.00]"),
    Observation(x="b", y=" dog(1.00) dog(1.00) ,(0.50) [max 1.00]"),
    Observation(x="c", y=" dog(0.20) cat(0.00) .(0.00) [max 0.20]"),
]


def test_tokens_ranked_by_largest_activation_or_by_count() -> None:
    assert top_tokens(OBS, 5, "max") == ["cat", "dog", ","]
    assert top_tokens(OBS, 2, "count") == ["dog", ","]  # dog 3 times; "," and cat once: by name


def test_both_agents_are_registered_and_answer_with_quoted_tokens() -> None:
    """Driven through the text protocol as the harness writes it (`command_inputs`, `format_reply`):
    every probe answered with one of the replies above, then the description."""
    for name, first in (("scripted-sae", '"cat"'), ("sae-frequent-tokens", '"dog"')):
        agent = get_agent(name)
        assert len(agent.probes) >= 60  # sparse latents need many tokens
        conversation = [Message(role="user", content="task")]
        for _ in range(10):
            reply = asyncio.run(agent.step(conversation))
            inputs = command_inputs(reply.content)
            if inputs is None:
                break
            outs = [Out(x, OBS[i % 3].y) for i, x in enumerate(inputs)]
            conversation += [
                Message(role="assistant", content=reply.content),
                Message(role="user", content=format_reply(outs)),
            ]
        assert "[DESCRIPTION]" in reply.content
        assert reply.content.split("fires on ")[1].startswith(first)


@dataclass
class Out:
    input: str
    output: str | None
    error: str | None = None
