"""Threads that outlive their cell (issue 49, item 6): a daemon thread a cell starts keeps
spinning while the agent thinks. The lab's CPU time between cells is watched too: past
`idle_cpu_s` the lab is stopped, and the next cell's reply says why. A real bwrap lab."""

from __future__ import annotations

import asyncio

from interp_harness.harness.lab.frames import Call, CallResult
from interp_harness.harness.lab.limits import LabLimits, idle_cpu_s
from interp_harness.harness.lab.session import Lab

SPIN = (
    "import threading\n"
    "def spin():\n"
    "    while True:\n"
    "        pass\n"
    "threading.Thread(target=spin, daemon=True).start()\n"
    "print('started')\n"
)


async def no_calls(frame: Call) -> CallResult:
    raise AssertionError("no target call")


async def test_a_thread_left_spinning_between_cells_gets_the_lab_stopped() -> None:
    limits = LabLimits(cell_cpu_s=2.0)
    bound = idle_cpu_s(limits)
    lab = Lab([], limits)
    try:
        first = await lab.run(SPIN, no_calls)
        assert first.status == "ok" and first.stdout == "started\n"
        proc = lab._proc
        assert proc is not None
        cpu0 = proc.jail.cpu_s()
        idle = 0.0
        for _ in range(int((bound + 4.0) / 0.25)):  # the agent thinks
            await asyncio.sleep(0.25)
            idle = max(idle, proc.jail.cpu_s() - cpu0)
        print(f"CPU used by the lab while idle: {idle:.1f} s (bound {bound:g} s)")
        assert not proc.alive
        assert "between cells" in (proc.killed or "")
        assert idle <= bound + 1.5
        # the next cell runs in a fresh lab, and its reply says so
        second = await lab.run("print(1)", no_calls)
        assert second.stdout == "1\n"
        note = lab.take_resume_note() or ""
        assert "between cells" in note and "every variable" in note
        assert "between cells" in second.reply(note)
    finally:
        await lab.aclose()
