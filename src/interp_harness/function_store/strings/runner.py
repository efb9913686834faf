"""Runner "string": evaluates a StringProgram target on each input, in process.

Deviation from FIND: FIND's CLI has no try/except, so one failing input empties the
output of the whole call. Here a failure affects only its own input (`CallOutput.error`), so an
agent still sees the other results. Outputs are `str(result)`, as FIND prints them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from interp_harness.function_store.strings.program import StringProgram
from interp_harness.sdk import CallOutput, RuntimeContext, Target, register_runner


class StringRunner:
    def __init__(self, program: StringProgram, seed: int | None = None) -> None:
        self.program = program
        # Stochastic functions draw fresh randomness per call unless a seed is configured.
        self._rng = random.Random(seed) if seed is not None else random.Random()

    def call(self, inputs: Sequence[str]) -> list[CallOutput]:
        out: list[CallOutput] = []
        for s in inputs:
            try:
                out.append(CallOutput(input=s, output=str(self.program(s, self._rng))))
            except Exception as e:  # the GT raising is a per-input result, not a crash
                out.append(CallOutput(input=s, error=f"{type(e).__name__}: {e}"))
        return out


@register_runner("string")
def string_runner(target: Target, ctx: RuntimeContext) -> StringRunner:
    return StringRunner(StringProgram.model_validate(target.hidden.spec), ctx.seed)
