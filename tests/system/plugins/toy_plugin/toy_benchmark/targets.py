"""The toy dataset (`toy/<mood>/<n>`) and its runner."""

from __future__ import annotations

from collections.abc import Sequence

from interp_harness.sdk import (
    CallOutput,
    HiddenTruth,
    PublicMeta,
    RuntimeContext,
    Target,
    make_canary,
    register_runner,
)

MOODS = ("shout", "whisper", "shout", "whisper")


def load(family: str, options: object) -> list[Target]:
    out = []
    for i, mood in enumerate(MOODS):
        tid = f"toy/{mood}/{i}"
        out.append(
            Target(
                id=tid,
                dataset="toy",
                family="toy",
                variant=mood,
                public=PublicMeta(input_kind="string", prompt_family="toy"),
                hidden=HiddenTruth(
                    runner="toy", spec={"mood": mood}, description=mood, canary=make_canary(tid)
                ),
            )
        )
    return out


class Mood:
    def __init__(self, target: Target) -> None:
        self.upper = target.hidden.spec["mood"] == "shout"

    def call(self, inputs: Sequence[str]) -> list[CallOutput]:
        return [CallOutput(input=x, output=x.upper() if self.upper else x.lower()) for x in inputs]


@register_runner("toy")
def build(target: Target, ctx: RuntimeContext) -> Mood:
    return Mood(target)
