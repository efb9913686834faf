"""A session: a long-lived process in a sandbox whose stdin and stdout are its caller's channel
(the lab's kernel, harness/lab/), with the jail that confines it. The backends that offer
sessions (`Sandbox.offers`) are the lab's: `lab-bwrap` and `lab-docker` in the registry
(harness/sandbox/base.py)."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

_CLK = os.sysconf("SC_CLK_TCK")


class Jail(Protocol):
    """What confines one session's process, as a watchdog and a reaper need it."""

    def cpu_s(self) -> float:
        """CPU seconds used by the session's whole process tree."""
        ...

    def kill(self) -> None:
        """Kill every process of the session; must not block (timers and watchdogs call it)."""
        ...

    async def started(self) -> None:
        """Checks that need the process running (once it answered); SandboxError if one fails."""
        ...

    async def why_dead(self, returncode: int | None) -> str | None:
        """Which limit killed the process, in words; None when none did."""
        ...

    async def release(self) -> None:
        """Remove what the session left (cgroup, files, container); the process is dead."""
        ...


@dataclass
class Session:
    proc: asyncio.subprocess.Process  # stdin and stdout: the channel; stderr: the caller's file
    jail: Jail


def tree_cpu_s(root: int) -> float:
    """CPU seconds of `root` and every process below it (their reaped children included)."""
    total, todo, seen = 0, [root], set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
            for task in os.listdir(f"/proc/{pid}/task"):
                kids = Path(f"/proc/{pid}/task/{task}/children").read_text().split()
                todo += [int(k) for k in kids]
        except (OSError, ValueError, IndexError):
            continue
    return total / _CLK
