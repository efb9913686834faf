"""A sandbox process whose start is cancelled: the cancellation ends at once, nothing lives on."""

from __future__ import annotations

import asyncio
import os
import time
import uuid

import pytest

from interp_harness.harness.sandbox.spawn import spawn


def _marked(marker: str) -> set[int]:
    out = set()
    for p in os.listdir("/proc"):
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    out.add(int(p))
        except (OSError, ValueError):
            pass
    return out


@pytest.mark.parametrize("ticks", [1, 2, 3, 4])
async def test_cancelled_start_kills_the_whole_session(ticks: int) -> None:
    marker = f"0.{uuid.uuid4().int % 10**12:012d}"  # sleep adds its arguments: 60 s and a mark
    # a launcher that leaves a second process in its session holding the pipes, as bwrap does
    launcher = ("sh", "-c", f"sleep 60 {marker} & exec sleep 60 {marker}")
    task = asyncio.ensure_future(
        spawn(
            *launcher,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    )
    for _ in range(ticks):  # cancel at each step of the start: the pipes' connection included
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
    seen: set[int] = set()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        now = _marked(marker)
        seen |= now
        # gone from /proc: killed and reaped (the launcher by us, what it left by init)
        if seen and not now and not any(os.path.exists(f"/proc/{p}") for p in seen):
            break
        await asyncio.sleep(0.05)
    assert seen, "the start was cancelled before its process existed: nothing was tested"
    assert not [p for p in seen if os.path.exists(f"/proc/{p}")], "the cancelled start lives on"


async def test_a_start_not_cancelled_gives_the_process() -> None:
    proc = await spawn("sh", "-c", "echo ready", stdout=asyncio.subprocess.PIPE)
    assert await proc.stdout.read() == b"ready\n"  # type: ignore[union-attr]
    assert await proc.wait() == 0
