"""One running lab: the kernel's sandboxed process, and the orchestrator's end of its channel.

`LabProcess.start` starts the kernel (harness/lab/kernel.py) with the generated `target` module
as a session of the operator's lab backend (LabLimits.backend, the sandbox registry's `lab-bwrap`
or `lab-docker`): bubblewrap under a cgroup (processes, memory, one CPU) and rlimits (address
space, files, harness/lab/sandbox.py), or a Docker container with the same limits
(harness/lab/docker_lab.py), and waits for `ready`. `run_cell` sends one cell and serves its
target calls until its `done`; meanwhile a watchdog enforces the hard limits from outside: the cell's wall time (the clock
stops while the orchestrator answers a target call) and the CPU time of the whole process tree,
each with a grace after the kernel's own timers. A cell that breaks a hard limit, a lab that
dies (out of memory), writes an invalid or oversized frame, or answers out of turn is killed:
`run_cell` raises `LabBroken` with the reason, and the process is not used again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from interp_harness.harness.agent_host.host import LineTooLong, read_line
from interp_harness.harness.domain.tool_checks import call_bounds
from interp_harness.harness.lab import frames
from interp_harness.harness.lab.figures import FIGURE_MAX_PIXELS, FIGURE_MAX_SIDE
from interp_harness.harness.lab.frames import CallResult, Done
from interp_harness.harness.lab.limits import GRACE_S, START_TIMEOUT_S, LabLimits, idle_cpu_s
from interp_harness.harness.sandbox.base import Limits, SandboxError, get_sandbox
from interp_harness.harness.sandbox.session import Jail

log = logging.getLogger(__name__)

KERNEL_SOURCE = Path(__file__).with_name("kernel.py")
_IDLE_TICK_S = 0.5  # how often the watchdog between cells looks at the lab's CPU time
_TICK_S = 0.1  # how often the watchdog looks at the clocks (a limit is seen this much late)
_PARSE_INLINE = 256 * 1024  # longer frames are parsed in a worker thread

OnCall = Callable[[frames.Call], Awaitable[CallResult]]


class LabBroken(Exception):
    """The lab was killed or broke its channel; `reason` says why, for the agent."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class LabStartError(SandboxError):
    """A lab could not be started (infrastructure)."""


class CellClock:
    """A cell's wall clock, stopped while a target call is answered."""

    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s
        self.used = 0.0
        self._since: float | None = time.monotonic()

    def stop(self) -> None:
        if self._since is not None:
            self.used += time.monotonic() - self._since
            self._since = None

    def go(self) -> None:
        if self._since is None:
            self._since = time.monotonic()

    def elapsed(self) -> float:
        run = time.monotonic() - self._since if self._since is not None else 0.0
        return self.used + run


class LabProcess:
    """A started lab. One cell at a time."""

    def __init__(
        self, proc: asyncio.subprocess.Process, jail: Jail, log_file: Any, limits: LabLimits
    ) -> None:
        self.proc, self.jail, self.log_file = proc, jail, log_file
        self.limits = limits
        self.killed: str | None = None  # why the watchdog killed it
        self._export_id = 0
        self._idle: asyncio.Task[None] | None = None  # the watchdog between cells

    # ---- start ------------------------------------------------------------------------------
    @classmethod
    async def start(cls, target_source: str, limits: LabLimits) -> LabProcess:
        files = {"kernel.py": KERNEL_SOURCE.read_bytes(), "target.py": target_source.encode()}
        sbx = Limits(
            timeout_s=START_TIMEOUT_S,
            memory_mb=limits.memory_mb,
            max_procs=limits.max_procs,
            max_output_bytes=max(limits.tmp_mb, 1) * 1024 * 1024,  # the largest file it writes
        )
        log_file = tempfile.TemporaryFile(prefix="lab-log-")
        try:
            backend = get_sandbox(
                f"lab-{limits.backend}", tmp_mb=limits.tmp_mb, packages=limits.packages
            )
            session = await backend.start_session(
                files, main="kernel.py", limits=sbx, stderr=log_file
            )
        except SandboxError as e:
            log_file.close()
            raise LabStartError(str(e)) from e
        except BaseException:
            log_file.close()
            raise
        lab = cls(session.proc, session.jail, log_file, limits)
        try:
            first = await asyncio.wait_for(lab._read(), START_TIMEOUT_S)
            await session.jail.started()
        except SandboxError as e:
            await lab.close()
            raise LabStartError(str(e)) from None
        except (LabBroken, TimeoutError) as e:
            tail = lab.log_tail()
            await lab.close()
            why = e.reason if isinstance(e, LabBroken) else f"no answer in {START_TIMEOUT_S:g} s"
            raise LabStartError(
                f"the lab did not start: {why}" + (f"; its output:\n{tail}" if tail else "")
            ) from None
        except BaseException:
            await lab.close()
            raise
        if not isinstance(first, frames.Ready):
            await lab.close()
            raise LabStartError(f"the lab did not start: it sent {first.op!r} first")
        return lab

    # ---- the channel ------------------------------------------------------------------------
    async def _read(
        self,
    ) -> frames.Ready | frames.Call | frames.Oversized | Done | frames.Exported:
        assert self.proc.stdout is not None
        try:
            line = await read_line(self.proc.stdout, frames.MAX_FRAME)
        except LineTooLong as e:
            raise LabBroken(
                f"the lab wrote a message of {e.size:,}{'' if e.complete else '+'} bytes on its "
                f"channel (at most {frames.MAX_FRAME:,})"
            ) from None
        except (OSError, ValueError, asyncio.IncompleteReadError) as e:
            raise LabBroken(await self._death_note(f"{type(e).__name__}")) from None
        if not line.endswith(b"\n"):
            await self._reap()
            raise LabBroken(await self._death_note("it ended"))
        try:  # items counted before any per-item work (a 20 MB call held the loop 49 s)
            if (big := frames.oversized(line)) is not None:
                return big
        except ValueError as e:
            raise LabBroken(f"the lab wrote an invalid message on its channel ({e})") from None
        try:
            if len(line) > _PARSE_INLINE:  # long texts: parsed off the event loop
                return await asyncio.to_thread(frames.FROM_LAB.validate_json, line)
            return frames.FROM_LAB.validate_json(line)
        except ValidationError as e:
            raise LabBroken(
                f"the lab wrote an invalid message on its channel ({e.error_count()} problems, "
                f"first: {e.errors()[0]['msg'][:200]})"
            ) from None

    async def _send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(data)
            await self.proc.stdin.drain()
        except (OSError, ValueError, RuntimeError) as e:
            raise LabBroken(await self._death_note(f"{type(e).__name__}")) from None

    async def _reap(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.proc.wait(), 2)

    async def _death_note(self, what: str) -> str:
        if self.killed:
            return self.killed
        rc = self.proc.returncode
        if (why := await self.jail.why_dead(rc)) is not None:
            return why
        status = f" (status {rc})" if rc is not None else ""
        return f"the lab's process ended{status}: {what}"

    # ---- cells ------------------------------------------------------------------------------
    async def run_cell(
        self, cell_id: int, code: str, on_call: OnCall, wall_s: float | None = None
    ) -> Done:
        """Run one cell; `on_call` answers its target calls. LabBroken when the lab had to be
        killed (the process is dead then). An exception of `on_call` kills the lab and is
        raised (the episode ends: the lab's state is unknown)."""
        lim = self.limits
        wall = lim.cell_wall_s if wall_s is None else min(lim.cell_wall_s, wall_s)
        request = {
            "op": "run",
            "id": cell_id,
            "code": code,
            "wall_s": wall,
            "cpu_s": lim.cell_cpu_s,
            "chars": lim.max_output_chars,
            # what the kernel renders; the orchestrator checks the PNGs again (figures.py)
            "figures": lim.max_figures,
            "figure_bytes": lim.max_figure_kb * 1024,
            "figure_pixels": FIGURE_MAX_PIXELS,
            "figure_side": FIGURE_MAX_SIDE,
            "figures_total": frames.FIGURES_MAX_BYTES,
        }
        self._stop_idle_watch()
        clock = CellClock(wall + GRACE_S)
        cpu0 = self.jail.cpu_s()
        watchdog = asyncio.create_task(self._watch(clock, cpu0, lim.cell_cpu_s + GRACE_S, wall))
        calls = 0
        try:
            await self._send(frames.encode(request))
            while True:
                frame = await self._read()
                if isinstance(frame, Done) and frame.id == cell_id:
                    self._idle = asyncio.create_task(self._watch_idle(self.jail.cpu_s()))
                    return frame
                if not isinstance(frame, frames.Call | frames.Oversized) or frame.cell != cell_id:
                    raise LabBroken(f"the lab sent {frame.op!r} out of turn on its channel")
                calls += 1
                if isinstance(frame, frames.Oversized):
                    result = CallResult(
                        id=frame.id,
                        ok=False,
                        kind="refused",
                        error=f"too many inputs: a call of {frame.items:,} items, the limit is "
                        f"{call_bounds()[0]} inputs",
                    )
                elif calls > lim.max_calls_per_cell:
                    result = CallResult(
                        id=frame.id,
                        ok=False,
                        kind="refused",
                        error=f"more than {lim.max_calls_per_cell} target calls in one cell",
                    )
                else:
                    clock.stop()
                    try:
                        result = await on_call(frame)
                    finally:
                        clock.go()
                    result = result.model_copy(update={"id": frame.id})
                await self._send(frames.encode(result))
        except LabBroken:
            await self.close()
            raise
        except BaseException:
            await self.close()
            raise
        finally:
            watchdog.cancel()

    async def _watch(self, clock: CellClock, cpu0: float, cpu_s: float, wall: float) -> None:
        while True:
            await asyncio.sleep(_TICK_S)
            if clock.elapsed() > clock.limit_s:
                self._kill(f"the cell ran longer than its wall-time limit ({wall:g} s)")
                return
            used = self.jail.cpu_s()
            if used - cpu0 > cpu_s:
                self._kill(
                    f"the cell used more than its CPU-time limit ({self.limits.cell_cpu_s:g} s)"
                )
                return

    async def _watch_idle(self, cpu0: float) -> None:
        """Between cells the lab should be idle: a thread or process a cell left running that
        uses more than `idle_cpu_s` of CPU before the next cell gets the lab killed (the next
        cell starts a fresh one, and its reply says why)."""
        bound = idle_cpu_s(self.limits)
        while True:
            await asyncio.sleep(_IDLE_TICK_S)
            if self.jail.cpu_s() - cpu0 > bound:
                self._kill(
                    f"between cells the lab used more than {bound:g} s of CPU time (a thread "
                    "or process a cell left running), so it was stopped"
                )
                return

    def _stop_idle_watch(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None

    async def export(self, name: str, timeout_s: float) -> frames.Exported:
        """The source of a function defined in the lab (`frames.Exported`). LabBroken when the
        lab does not answer in time or breaks its channel."""
        self._export_id += 1
        timer = asyncio.get_running_loop().call_later(
            timeout_s, self._kill, f"the lab did not export {name!r} within {timeout_s:g} s"
        )
        try:
            await self._send(frames.encode({"op": "export", "id": self._export_id, "name": name}))
            frame = await self._read()
        except LabBroken:
            await self.close()
            raise
        finally:
            timer.cancel()
        if not isinstance(frame, frames.Exported) or frame.id != self._export_id:
            await self.close()
            raise LabBroken(f"the lab sent {frame.op!r} out of turn on its channel")
        return frame

    # ---- the end ----------------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return self.proc.returncode is None and self.killed is None

    def _kill(self, reason: str | None = None) -> None:
        if reason and self.killed is None:
            self.killed = reason
        self.jail.kill()

    def log_tail(self, n: int = 3000) -> str:
        with contextlib.suppress(OSError, ValueError):
            self.log_file.seek(0, os.SEEK_END)
            self.log_file.seek(max(0, self.log_file.tell() - n))
            return self.log_file.read().decode("utf-8", "replace").strip()
        return ""

    async def close(self) -> None:
        """Kill the lab and remove what it left (idempotent)."""
        self._stop_idle_watch()
        self._kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.proc.wait(), 5)
        await self.jail.release()
        with contextlib.suppress(Exception):
            self.log_file.close()
