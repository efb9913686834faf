"""Resume by replay: a resumed episode's lab is rebuilt by running its stored cells again.

The orchestrator keeps no lab state outside the lab process, so after a crash (kill -9) the
episode's variables live only in the store, as the cells that made them. `rebuild` runs the
stored cells again, in order, in the episode's new lab, from the cell after the last one that
ended `restarted` (a restart lost everything before it, as it did the first time). Each target
call a replayed cell makes is answered from the stored `target_calls` row at its place: the
cell's step, index `first_call + k` for its k-th call, and only when the call's words (the
command and arguments as the target receives them) equal the stored inputs. Replay calls no
target and stores nothing.

A replay that cannot reproduce a cell (a call other than the stored one, a different number of
calls, another outcome, a lab that breaks) stops: the lab is discarded and the next cell runs
in a fresh one, with a note saying so, as before replay existed. A cell is only as
reproducible as its code: random numbers without a seed, the clock or files written outside
`/tmp` may give other values in the rebuilt lab; that is not detected.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

from interp_harness.agents.protocol.tools import to_words
from interp_harness.agents.toolspec import ToolSpec
from interp_harness.function_store.models import CallOutput
from interp_harness.harness.lab.api import call_value
from interp_harness.harness.lab.frames import Call, CallResult
from interp_harness.harness.lab.session import Lab
from interp_harness.harness.store.models import LabCell, TargetCall

log = logging.getLogger(__name__)

# a cell's call, checked as the episode checks it: its declared command, or the call's refusal
CheckCall = Callable[[Call], Awaitable[ToolSpec | CallResult]]


def not_rebuilt(why: str) -> str:
    """The note the agent reads with its next cell when the replay stopped."""
    return (
        "Note: the harness resumed this session and could not rebuild the lab by running the "
        f"earlier cells again ({why}), so it started a fresh lab: the variables, imports and "
        "files of the earlier cells are gone; run again what you need."
    )


class _Diverged(Exception):
    """A replayed cell made a call the store does not hold at its place."""


def cells_to_replay(cells: Sequence[LabCell]) -> list[LabCell]:
    """The stored cells whose state the lab held when the orchestrator died: those after the
    last one that ended `restarted`, in their order."""
    ordered = sorted(cells, key=lambda c: c.number)
    after = max((i for i, c in enumerate(ordered) if c.status == "restarted"), default=-1)
    return ordered[after + 1 :]


async def rebuild(
    lab: Lab, cells: Sequence[LabCell], calls: Sequence[TargetCall], check: CheckCall
) -> str | None:
    """Run `cells` (the episode's stored cells) again in `lab`, their target calls answered
    from `calls` (the episode's stored target calls). Returns None when the lab holds their
    state again; else why not, after discarding the lab's process and setting the note its
    next cell's reply carries. Raises LabStartError when no lab starts."""
    why = await _replay(lab, cells_to_replay(cells), calls, check)
    if why is None:
        lab.note = None
        log.info("lab rebuilt by replaying %d stored cells", len(cells))
    else:
        await lab.reset()
        lab.note = not_rebuilt(why)
        log.info("lab not rebuilt: %s", why)
    return why


async def _replay(
    lab: Lab, cells: Sequence[LabCell], calls: Sequence[TargetCall], check: CheckCall
) -> str | None:
    stored = {(c.step, c.idx): c for c in calls}
    for cell in cells:
        answered: list[TargetCall] = []

        async def on_call(
            frame: Call, cell: LabCell = cell, answered: list[TargetCall] = answered
        ) -> CallResult:
            spec = await check(frame)
            if isinstance(spec, CallResult):  # refused, as it was the first time
                return spec
            words = to_words(spec, frame.arguments)
            k = len(answered)
            row = stored.get((cell.step, cell.first_call + k)) if k < cell.n_calls else None
            if row is None or list(row.inputs) != words:
                raise _Diverged(
                    f"cell {cell.number}'s target call {k + 1} is not the call stored for it"
                )
            answered.append(row)
            outputs = [CallOutput.model_validate(o) for o in row.outputs]
            value, errors = call_value(spec, outputs)
            return CallResult(id=frame.id, ok=True, value=value, errors=errors)

        try:
            got = await lab.run(cell.code, on_call, number=cell.number)
        except _Diverged as e:
            return str(e)
        if got.status != cell.status:
            return f"cell {cell.number} ended {got.status!r}, not {cell.status!r} as stored"
        if len(answered) != cell.n_calls:
            return (
                f"cell {cell.number} made {len(answered)} target calls, not {cell.n_calls} "
                "as stored"
            )
    return None
