"""The protocol over a whole conversation, as the offline agents need it: the script path the
task prompt names, the (input, output) pairs seen so far, the next probing command.

The scripted agents keep no state between steps: everything is re-read from the conversation, so
an episode resumed from the store continues exactly where it stopped.
"""

from __future__ import annotations

import cmath
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from interp_harness.agents.base import Message
from interp_harness.agents.protocol.commands import (
    DEFAULT_PATH,
    command,
    command_inputs,
    quote_input,
)
from interp_harness.agents.protocol.reply import parse_pairs
from interp_harness.agents.protocol.values import parse_value

_PATH_RE = re.compile(r"PYTHON\(\s*([^\s()]+)")


def function_path(conversation: Sequence[Message]) -> str:
    """The script path the task prompt names (FIND: `PYTHON(./temp/function.py value)`)."""
    for m in conversation:
        if m.role == "user":
            found = _PATH_RE.search(m.content)
            if found:
                return found.group(1)
    return DEFAULT_PATH


def task_prompt(conversation: Sequence[Message]) -> str:
    return next((m.content for m in conversation if m.role == "user"), "")


@dataclass
class Observation:
    x: str  # the input as sent
    y: str  # the output as printed


def observations(conversation: Sequence[Message]) -> tuple[list[Observation], int]:
    """All (input, output) pairs seen so far, and how many commands the agent has sent."""
    obs: list[Observation] = []
    sent = 0
    for k, m in enumerate(conversation):
        if m.role != "assistant":
            continue
        inputs = command_inputs(m.content)
        if inputs is None:
            continue
        sent += 1
        reply = conversation[k + 1].content if k + 1 < len(conversation) else ""
        if k + 1 < len(conversation) and conversation[k + 1].role == "user":
            # the line the reply's pairs are on: a multi-line output is seen up to its first line
            # (the scripted baselines' scores were set reading replies so)
            pairs = parse_pairs(reply, inputs, line_only=True)
            obs.extend(Observation(x, y) for x, y in pairs)
    return obs, sent


def next_chunk(conversation: Sequence[Message], items: Sequence[str], size: int) -> str | None:
    """The command probing the next `size` of `items` (one command per round, each input
    quoted by `quote_input`), or None once every item has been sent."""
    _, sent = observations(conversation)
    chunk = items[sent * size : (sent + 1) * size]
    if not chunk:
        return None
    return command(function_path(conversation), [quote_input(x) for x in chunk])


def numeric_points(
    obs: Sequence[Observation],
) -> tuple[list[float], list[float], list[tuple[float, complex]]]:
    """Finite real (x, y) samples, and the complex-valued ones kept apart (root of a negative)."""
    xs: list[float] = []
    ys: list[float] = []
    cplx: list[tuple[float, complex]] = []
    for o in obs:
        try:
            x = float(o.x)
        except ValueError:
            continue
        y = parse_value(o.y)
        if isinstance(y, complex):
            if cmath.isfinite(y):
                cplx.append((x, y))
        elif y is not None and math.isfinite(y):
            xs.append(x)
            ys.append(y)
    return xs, ys, cplx
