"""Starting a sandbox's process from the event loop, safe against cancellation."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
from typing import Any

# Background reapers: the loop keeps only weak references to tasks.
_REAPERS: set[asyncio.Task[Any]] = set()


async def spawn(*cmd: str, **kwargs: Any) -> asyncio.subprocess.Process:
    """`asyncio.create_subprocess_exec`, except that a cancellation never leaves it hanging.

    CPython 3.11 kills a child whose creation is cancelled and then waits for its exit, which its
    transport reports only once every pipe was connected and closed; cancelled while the pipes
    were being connected, that wait can last forever (a scheduler's `stop()` hung on one such
    episode). So the creation is shielded: cancelled, it still runs to its end in the background,
    then the child is killed and reaped there, and the cancellation goes on at once."""
    creating = asyncio.ensure_future(asyncio.create_subprocess_exec(*cmd, **kwargs))
    try:
        return await asyncio.shield(creating)
    except asyncio.CancelledError:
        group = bool(kwargs.get("start_new_session"))
        creating.add_done_callback(functools.partial(_kill_created, group=group))
        raise


def _kill_created(creating: asyncio.Future[asyncio.subprocess.Process], *, group: bool) -> None:
    if creating.cancelled() or creating.exception() is not None:
        return
    proc = creating.result()
    with contextlib.suppress(ProcessLookupError):
        if group:  # a session of its own: the sandbox's launcher and all it started
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    reaper = asyncio.ensure_future(proc.wait())
    _REAPERS.add(reaper)
    reaper.add_done_callback(_REAPERS.discard)
