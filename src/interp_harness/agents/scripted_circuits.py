"""Offline baselines for circuit targets (compiled transformers with a known circuit), no API.

- `scripted-circuits`: ACDC's idea at the level of nodes (Conmy et al. 2023): it runs the model
  on probe inputs, then ablates each component alone on the same inputs and keeps the components
  whose removal changes any output; it fits the input-to-output function from the probes' pairs
  (`sequence_fit`) and answers with the kept components, a description and that code.
- `circuits-random`: the floor: no experiment but `task` (the components' names), a circuit of
  k of them drawn at random (k uniform in 1..all, seeded by the task's reply), and code that
  returns its input. The size-matched floor of any answer is the scorer's `node_f1_random`.
Both are stateless between steps: everything is re-read from the conversation.

They write the family's declared commands (`task`, a run, `ablate`; the task prompt shows their
forms) and read one `Response:` line per command, in order, its outputs as JSON.
"""

from __future__ import annotations

import json
import random
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from interp_harness.agents.base import AgentReply, Message
from interp_harness.agents.protocol import function_path, quote_input
from interp_harness.agents.protocol.reply import PREFIX
from interp_harness.agents.sequence_fit import fit, fit_code
from interp_harness.agents.tools_adapter import TextProtocolAgent

N_PROBES = 48  # inputs the function is fitted on
N_ABLATION_PROBES = 12  # of them, the full-length ones each component is ablated on
ABLATION = "zero"  # a component that always writes the same value is still seen as needed


@dataclass(frozen=True)
class Shape:
    """What the `task` command tells: the input space and the components' names."""

    vocab: list[Any]
    max_len: int
    components: list[str]


def read_task(reply: str) -> Shape | None:
    """The `task` reply's JSON object (None: not found or not the expected keys)."""
    start = reply.find("{")
    if start < 0:
        return None
    try:
        task, _ = json.JSONDecoder().raw_decode(reply[start:])
        return Shape(list(task["vocabulary"]), int(task["max_length"]), list(task["components"]))
    except (ValueError, KeyError, TypeError):
        return None


def probes(shape: Shape, seed: int) -> list[list[Any]]:
    """Full-length inputs first (the ablations use them), then every length in turn."""
    rng = random.Random(seed)
    lengths = [shape.max_len] * N_ABLATION_PROBES + [
        1 + k % shape.max_len for k in range(N_PROBES - N_ABLATION_PROBES)
    ]
    return [[rng.choice(shape.vocab) for _ in range(n)] for n in lengths]


def encode(x: Sequence[Any]) -> str:
    """One input as one command word: its tokens separated by commas."""
    return quote_input(",".join(str(t) for t in x))


def json_values(line: str) -> list[Any]:
    """Every JSON array of one `Response:` line, outermost first, in order."""
    out, pos, dec = [], 0, json.JSONDecoder()
    while (start := line.find("[", pos)) >= 0:
        try:
            value, end = dec.raw_decode(line[start:])
        except ValueError:
            pos = start + 1
            continue
        out.append(value)
        pos = start + end
    return out


def responses(conversation: Sequence[Message]) -> list[list[str]]:
    """Per answered assistant message, its reply's `Response:` lines in order."""
    out = []
    for k, m in enumerate(conversation):
        if m.role == "assistant" and k + 1 < len(conversation):
            reply = conversation[k + 1].content
            out.append([ln for ln in reply.split("\n") if ln.startswith(PREFIX)])
    return out


def text_seed(text: str) -> int:
    """A seed drawn from a reply's text (the same reply, the same probes)."""
    return zlib.crc32(text.encode())


def circuit_answer(roles: dict[str, str], description: str, code: str) -> str:
    lines = "\n".join(f"{c}: {r}" for c, r in roles.items()) or "none"
    return f"[CIRCUIT]\n{lines}\n[DESCRIPTION]: {description}\n[CODE]:\n```python\n{code.strip()}\n```\n"


IDENTITY = "def f(tokens):\n    return list(tokens)\n"


def conclude(
    shape: Shape, xs: Sequence[list[Any]], full: Sequence[Any], kept: dict[str, str]
) -> str:
    """The answer: the kept components with their roles, and the function fitted on the probes'
    outputs (`full`, one list per probe)."""
    f = fit(list(zip(xs, full, strict=False)), shape.vocab)
    desc = (
        f"{f.describe()} (fitted on {len(full)} inputs; {f.explained:.0%} of their outputs "
        "reproduced)."
    )
    return circuit_answer(kept, desc, fit_code(f))


class ScriptedCircuitsAgent(TextProtocolAgent):
    name = "scripted-circuits"
    families = frozenset({"circuits"})
    provider = "local"
    description = "offline baseline for circuits: keeps components whose ablation changes outputs"

    async def text_step(self, conversation: list[Message]) -> AgentReply:
        path = function_path(conversation)
        done = responses(conversation)
        if not done:
            return AgentReply(content=f"PYTHON({path} task)")
        shape = read_task(done[0][0]) if done[0] else None
        if shape is None:
            return AgentReply(content=circuit_answer({}, "The task could not be read.", IDENTITY))
        xs = probes(shape, text_seed(done[0][0]))
        abl = xs[:N_ABLATION_PROBES]
        if len(done) == 1:
            return AgentReply(content=f"PYTHON({path} {' '.join(encode(x) for x in xs)})")
        full = json_values(done[1][0]) if done[1] else []
        if len(done) == 2:
            words = " ".join(encode(x) for x in abl)
            return AgentReply(
                content="\n".join(
                    f"PYTHON({path} ablate {words} --components {c} --kind {ABLATION})"
                    for c in shape.components
                )
            )
        kept: dict[str, str] = {}
        for c, line in zip(shape.components, done[2], strict=False):
            outs: list[Any] = next(iter(json_values(line)), [])
            changed = sum(o != f for o, f in zip(outs, full, strict=False))
            if changed:
                kept[c] = f"ablating it changes the output on {changed} of {len(abl)} probes"
        return AgentReply(content=conclude(shape, xs, full, kept))


class RandomCircuitFloor(TextProtocolAgent):
    name = "circuits-random"
    families = frozenset({"circuits"})
    provider = "local"
    description = "floor for circuits: a random circuit, code returning its input; no experiment"

    async def text_step(self, conversation: list[Message]) -> AgentReply:
        done = responses(conversation)
        if not done:
            return AgentReply(content=f"PYTHON({function_path(conversation)} task)")
        line = done[0][0] if done[0] else ""
        shape = read_task(line)
        names = shape.components if shape else []
        rng = random.Random(text_seed(line))
        chosen = (
            sorted(rng.sample(names, rng.randint(1, len(names))), key=names.index) if names else []
        )
        return AgentReply(
            content=circuit_answer(
                {c: "drawn at random" for c in chosen},
                "A random circuit (the floor); the code returns its input unchanged.",
                IDENTITY,
            )
        )
