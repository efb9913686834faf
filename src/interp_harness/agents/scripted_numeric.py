"""`scripted-numeric`: an offline baseline for FIND's numeric functions, no API needed.

It samples [-128, 128] through the protocol (an integer grid, then dense fractional inputs near 0
and scattered fractional inputs across the range, which break aliasing of periodic functions
and reveal ceil/floor), fits candidate families (interp_harness.agents.numeric_fit), and answers in FIND's
format with code for the best fit, including a corrupted interval when one is found. When no
family explains the samples better than linear interpolation between them does, it answers with
the interpolation instead (e.g. FIND's MLP-approximated functions).

It keeps no state: the plan step is the number of commands already in the conversation.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from pydantic import Field

from interp_harness.agents.base import AgentOptions, AgentReply, Message
from interp_harness.agents.interpolation import interpolation_code
from interp_harness.agents.numeric_fit import Fit, fit_samples, interp_cv_rss, num
from interp_harness.agents.protocol import (
    answer,
    command,
    fmt_number,
    function_path,
    numeric_points,
    observations,
)
from interp_harness.agents.tools_adapter import TextProtocolAgent


def default_plan(max_inputs_per_call: int = 130) -> list[list[str]]:
    # x = 0 is skipped: FIND's scoring grid (half-integers) never evaluates it, and
    # reciprocal functions print None there.
    even = [v for v in range(-128, 129, 2) if v != 0]
    odd = list(range(-127, 128, 2))
    dense = [round(v / 10, 1) for v in range(-80, 81) if v % 10 != 0]
    scattered = [k + 0.37 for k in range(-128, 125, 4)]
    batches: list[list[str]] = []
    for group in (even, odd, dense, scattered):
        values = [fmt_number(v) for v in group]
        for i in range(0, len(values), max_inputs_per_call):
            batches.append(values[i : i + max_inputs_per_call])
    return batches


def code_for(fit: Fit) -> str:
    lines = ["import numpy as np", "", "", "def f(x):"]
    if fit.corruption is None:
        lines.append(f"    return {fit.expr}")
    else:
        lo, hi, v = fit.corruption
        conds = [
            c
            for c in (
                f"(x > {num(lo)})" if math.isfinite(lo) else "",
                f"(x < {num(hi)})" if math.isfinite(hi) else "",
            )
            if c
        ]
        lines += [
            f"    y = {fit.expr}",
            f"    # corrupted interval: about constant {num(v)} there",
            f"    return np.where({' & '.join(conds)}, {num(v)}, y)",
        ]
    return "\n".join(lines) + "\n"


def _interval_words(lo: float, hi: float) -> str:
    if not math.isfinite(lo):
        return f"for x < {num(hi)}"
    if not math.isfinite(hi):
        return f"for x > {num(lo)}"
    return f"between x = {num(lo)} and x = {num(hi)}"


class ScriptedNumericOptions(AgentOptions):
    max_inputs_per_call: int = Field(130, ge=1, le=10_000)


class ScriptedNumericAgent(TextProtocolAgent):
    """Offline numeric baseline: samples f on [-128, 128] and fits candidate families."""

    name = "scripted-numeric"
    families = frozenset({"numeric"})
    provider = "local"
    description = (
        "offline baseline: samples a numeric function and fits candidate families (no API)"
    )
    Options = ScriptedNumericOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.plan = default_plan(int(options.get("max_inputs_per_call", 130)))

    async def text_step(self, conversation: list[Message]) -> AgentReply:
        path = function_path(conversation)
        obs, sent = observations(conversation)
        if sent < len(self.plan):
            return AgentReply(
                content=f"Sampling f on batch {sent + 1} of {len(self.plan)}.\nCOMMAND: "
                + command(path, self.plan[sent])
            )
        return AgentReply(content=self.conclude(obs))

    def conclude(self, obs: list[Any]) -> str:
        xs, ys, cplx = numeric_points(obs)
        if len(xs) < 3:
            return answer(
                "I could not obtain numeric outputs from f(x): the calls returned no usable values "
                f"({len(obs)} input-output pairs read).",
                "import numpy as np\n\n\ndef f(x):\n    return 0.0 * np.asarray(x, dtype=float)\n",
                "Unknown: no input produced a finite numeric output.",
            )
        result = fit_samples(xs, ys, cplx)
        fit = result.best
        energy = float(np.sum(np.square(ys)))
        cv = interp_cv_rss(xs, ys)
        notes: list[str] = []
        n = len(xs) + len(cplx)
        noise_sd = math.sqrt(fit.rss / max(n - fit.k, 1))
        if fit.rss > 2 * cv and fit.rss > 1e-3 * energy:
            desc = (
                "f(x) does not match any simple family I tried closely; it is described by its samples "
                f"on [-128, 128] (range of outputs {num(min(ys))} to {num(max(ys))}). Best simple "
                f"approximation: {fit.description}"
            )
            return answer(
                desc,
                interpolation_code(xs, ys),
                "Sampled on [-128, 128]; no clear corrupted interval.",
            )
        if noise_sd > 1e-6 * (math.sqrt(energy / n) + 1e-12):
            notes.append(
                f"The outputs are noisy around this rule (residual standard deviation about {num(noise_sd)})."
            )
        domain = []
        if fit.family == "logarithm":
            domain.append("f is defined for x > 0 only (nan for x <= 0).")
        if fit.family == "root":
            domain.append("For x >= 0 the values are real; for x < 0 f returns complex numbers.")
        if fit.family == "reciprocal":
            domain.append("f is undefined at x = 0.")
        if fit.corruption is not None:
            lo, hi, v = fit.corruption
            domain.append(
                f"There is an interval where f behaves differently: {_interval_words(lo, hi)} it does not "
                f"follow the rule and instead returns values close to the constant {num(v)}."
            )
        else:
            domain.append(
                "The rule holds on the whole tested range [-128, 128]; I found no interval with unexpected behaviour."
            )
        description = " ".join([fit.description, *notes])
        return answer(description, code_for(fit), " ".join(domain))
