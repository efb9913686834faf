"""`interpolation`: the query-count floor for numeric functions (issue "Evaluator", "Query counts
and the interpolation floor"). It samples an even grid of [-128, 128] within an input budget and
answers with code that linearly interpolates its samples (np.interp; constant beyond the ends),
so the NMSE a pure lookup of that many queries reaches can be reported next to real agents."""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field

from interp_harness.agents.base import AgentOptions, AgentReply, Message
from interp_harness.agents.protocol import (
    answer,
    command,
    fmt_number,
    function_path,
    numeric_points,
    observations,
)
from interp_harness.agents.tools_adapter import TextProtocolAgent


def interpolation_code(xs: list[float], ys: list[float]) -> str:
    """np.interp over the samples (mean of repeats), constant beyond the sampled range."""
    table: dict[float, list[float]] = {}
    for x, y in zip(xs, ys, strict=True):
        table.setdefault(x, []).append(y)
    kx = sorted(table)
    ky = [sum(table[k]) / len(table[k]) for k in kx]
    return (
        "import numpy as np\n\n"
        f"XS = {[float(v) for v in kx]!r}\n"
        f"YS = {[float(v) for v in ky]!r}\n\n\n"
        "def f(x):\n"
        "    return np.interp(x, XS, YS)\n"
    )


def grid(max_inputs: int, lo: float = -128.0, hi: float = 128.0) -> list[str]:
    """`max_inputs` evenly spaced inputs over [lo, hi] (129 gives the even integers)."""
    if max_inputs < 2:
        raise ValueError(f"interpolation agent: max_inputs must be at least 2, got {max_inputs}")
    return [fmt_number(v) for v in np.linspace(lo, hi, max_inputs)]


class InterpolationOptions(AgentOptions):
    max_inputs: int = Field(129, ge=2, le=100_000)
    batch_size: int | None = Field(None, ge=1, le=100_000)
    low: float = Field(-128.0, allow_inf_nan=False)
    high: float = Field(128.0, allow_inf_nan=False)


class InterpolationAgent(TextProtocolAgent):
    """Baseline: grid-samples [-128, 128] and answers with linear interpolation of the samples.

    Options: max_inputs (default 129), batch_size (inputs per PYTHON call, default max_inputs),
    low/high (the sampled range, default -128/128)."""

    name = "interpolation"
    families = frozenset({"numeric"})
    provider = "local"
    description = "baseline: np.interp over a grid of samples (the NMSE floor for a query budget)"
    Options = InterpolationOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.max_inputs = int(options.get("max_inputs", 129))
        self.batch_size = int(options.get("batch_size", self.max_inputs))
        if self.batch_size < 1:
            raise ValueError(
                f"interpolation agent: batch_size must be positive, got {self.batch_size}"
            )
        values = grid(
            self.max_inputs, float(options.get("low", -128.0)), float(options.get("high", 128.0))
        )
        self.batches = [
            values[i : i + self.batch_size] for i in range(0, len(values), self.batch_size)
        ]

    async def text_step(self, conversation: list[Message]) -> AgentReply:
        obs, sent = observations(conversation)
        if sent < len(self.batches):
            return AgentReply(
                content="COMMAND: " + command(function_path(conversation), self.batches[sent])
            )
        xs, ys, _ = numeric_points(obs)
        if not xs:
            code = (
                "import numpy as np\n\n\ndef f(x):\n    return 0.0 * np.asarray(x, dtype=float)\n"
            )
            return AgentReply(
                content=answer("No sample gave a finite value; f is unknown.", code, "Unknown.")
            )
        desc = (
            f"Piecewise-linear interpolation of f between {len(set(xs))} sampled points in "
            f"[{min(xs):g}, {max(xs):g}] (a baseline that does not describe the function)."
        )
        domain = f"Sampled on an even grid of {self.max_inputs} points; outputs that were not finite were left out."
        return AgentReply(content=answer(desc, interpolation_code(xs, ys), domain))
