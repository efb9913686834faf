"""Resume by replay (harness/lab/replay.py) on a real bwrap lab: stored cells are run again in a
new lab with their target calls answered from the stored rows (no target exists in these tests:
a call the replay does not answer from the store fails the test), from after the last restart;
a call unlike the stored one, or a cell that ends otherwise, stops the replay and the next cell
runs in a fresh lab with a note saying so. The episode's path, killed with SIGKILL and resumed,
is tests/harness/lab/test_lab_resume.py."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from interp_harness.agents.protocol.tools import by_name
from interp_harness.function_store.benchmark import benchmark
from interp_harness.harness.lab.api import call_commands
from interp_harness.harness.lab.frames import Call, CallResult
from interp_harness.harness.lab.limits import LabLimits
from interp_harness.harness.lab.replay import rebuild
from interp_harness.harness.lab.session import RESUMED, Lab
from interp_harness.harness.lab.turns import checked_call
from interp_harness.harness.store.models import LabCell, TargetCall

pytestmark = pytest.mark.usefixtures("needs_bwrap")


def stored_cell(number: int, code: str, status: str = "ok", **kw: Any) -> LabCell:
    fields = {"step": 2 * number, "idx": 0, "first_call": 0, "n_calls": 0, **kw}
    return LabCell(episode_id="e", number=number, code=code, status=status, **fields)


def stored_call(step: int, idx: int, pairs: dict[str, str | None]) -> TargetCall:
    """A stored call's row; an input without an output failed ("not a number")."""
    outputs = [
        {"input": x, "output": y, "error": None if y is not None else "not a number"}
        for x, y in pairs.items()
    ]
    return TargetCall(episode_id="e", step=step, idx=idx, inputs=list(pairs), outputs=outputs)


async def no_target(frame: Call) -> CallResult:
    raise AssertionError(f"a target call after the replay: {frame}")


async def rebuilt(cells: list[LabCell], calls: list[TargetCall]) -> tuple[Lab, str | None]:
    """A new lab for an episode that stored `cells` and `calls`, after the replay."""
    commands = benchmark("numeric").commands
    lab = Lab(commands, LabLimits(), first_cell=len(cells) + 1)
    check = partial(checked_call, by_name(call_commands(commands)))  # the episode's check
    try:
        return lab, await rebuild(lab, cells, calls, check)
    except BaseException:
        await lab.aclose()
        raise


async def test_replay_answers_each_call_from_its_stored_row() -> None:
    # the stored outputs are not any function's: the values can only come from these rows
    cells = [
        stored_cell(
            1, "from target import call_function, f\nxs = call_function([1, 2])", n_calls=1
        ),
        stored_cell(
            2,
            # its calls sit after the step's two commands (idx 0 and 1) and in order
            "ys = [f(3), call_function(['4', 'oops'])]\nprint('not read again')",
            first_call=2,
            n_calls=2,
        ),
        stored_cell(3, "total = sum(xs) + ys[0]"),
    ]
    calls = [
        stored_call(2, 0, {"1": "100.0", "2": "200.0"}),
        stored_call(4, 0, {"9": "-1"}),  # a command of cell 2's message: never a cell's answer
        stored_call(4, 1, {"9": "-1"}),
        stored_call(4, 2, {"3": "7.5"}),
        stored_call(4, 3, {"4": None, "oops": None}),
    ]
    lab, why = await rebuilt(cells, calls)
    try:
        assert why is None
        assert lab.note is None  # the agent is told nothing: its lab is as it left it
        cell = await lab.run("print(xs, ys, total)", no_target)
        assert cell.status == "ok", cell
        assert cell.stdout == "[100.0, 200.0] [7.5, [None, None]] 307.5\n"
        assert cell.number == 4 and lab.take_resume_note() is None
    finally:
        await lab.aclose()


async def test_replay_starts_after_the_last_restart() -> None:
    cells = [
        # never run again: a call of its would have no stored row to be answered from
        stored_cell(1, "from target import f\na = f(1)"),
        stored_cell(2, "b = 2\nimport os\nos._exit(3)", status="restarted"),
        stored_cell(3, "c = 3"),
        stored_cell(4, "1 / 0", status="error"),
    ]
    lab, why = await rebuilt(cells, [])
    try:
        assert why is None
        cell = await lab.run("print([n in globals() for n in 'abc'], c)", no_target)
        assert cell.stdout == "[False, False, True] 3\n"
        assert cell.number == 5
    finally:
        await lab.aclose()


@pytest.mark.parametrize(
    ("cell2", "n_calls", "why"),
    [
        ("w = call_function([3])", 1, "cell 2's target call 1 is not the call stored for it"),
        ("w = 1", 1, "cell 2 made 0 target calls, not 1 as stored"),
        ("w = call_function([4]) + call_function([4])", 1, "call 2 is not the call stored"),
        ("w = 1 / 0", 0, "cell 2 ended 'error', not 'ok' as stored"),
    ],
)
async def test_a_cell_that_does_not_replay_as_stored_stops_the_replay(
    cell2: str, n_calls: int, why: str
) -> None:
    cells = [
        stored_cell(1, "from target import call_function\nv = 5"),
        stored_cell(2, cell2, n_calls=n_calls),
        stored_cell(3, "u = 6"),
    ]
    lab, got = await rebuilt(cells, [stored_call(4, 0, {"4": "9.0"})])
    try:
        assert got is not None and why in got
        cell = await lab.run("print('v' in globals(), 'u' in globals())", no_target)
        assert cell.stdout == "False False\n"  # a fresh lab: nothing of the replay is left
        reply = cell.reply(lab.take_resume_note())
        assert reply.startswith("Note: the harness resumed this session and could not rebuild")
        assert why in reply.splitlines()[0] and "cell 4 ran" in reply
        assert lab.take_resume_note() is None  # once
    finally:
        await lab.aclose()


async def test_a_lab_that_is_not_replayed_says_its_variables_are_gone() -> None:
    # a lab made for a resumed episode without a replay keeps the old note
    lab = Lab(benchmark("numeric").commands, LabLimits(), first_cell=3)
    try:
        cell = await lab.run("'x' in globals()", no_target)
        assert cell.number == 3 and cell.value == "False"
        assert lab.take_resume_note() == RESUMED
    finally:
        await lab.aclose()
