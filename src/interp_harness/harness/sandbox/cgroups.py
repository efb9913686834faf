"""Per-sandbox control groups: a process cap (fork bombs), a memory cap and a CPU quota.

rlimits alone cannot cap processes when the sandbox's user maps to host root (the kernel exempts
root from RLIMIT_NPROC), so where a cgroup hierarchy is writable we make one group per sandboxed
process tree. Both cgroup v2 (unified) and v1 (one hierarchy per controller) are handled; where
neither is writable, `CgroupLimits.create` returns None and callers fall back to rlimits only.
"""

from __future__ import annotations

import contextlib
import logging
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

ROOT = Path("/sys/fs/cgroup")
_PREFIX = "interp-harness-"


def _own_path(controller: str | None) -> str:
    """This process's cgroup path for a v1 controller (or the v2 path when controller is None)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, ctrls, path = line.split(":", 2)
        if controller is None and ctrls == "":
            return path
        if controller is not None and controller in ctrls.split(","):
            return path
    raise FileNotFoundError(controller or "cgroup2")


def _writable(p: Path) -> bool:
    return p.is_dir() and os.access(p, os.W_OK)


@dataclass
class CgroupLimits:
    """One group (per controller on v1). `join_fds` are opened before fork for `preexec`."""

    dirs: list[Path]
    version: int
    _fds: list[int] = field(default_factory=list)

    @classmethod
    def create(
        cls, *, pids: int, memory_bytes: int, cpu_quota: float | None
    ) -> CgroupLimits | None:
        name = _PREFIX + uuid.uuid4().hex[:12]
        try:
            if (ROOT / "cgroup.controllers").exists():
                return cls._create_v2(name, pids, memory_bytes, cpu_quota)
            return cls._create_v1(name, pids, memory_bytes, cpu_quota)
        except (OSError, FileNotFoundError, ValueError) as e:
            log.debug("no writable cgroup (%s): falling back to rlimits", e)
            return None

    @classmethod
    def _create_v2(cls, name: str, pids: int, mem: int, cpu: float | None) -> CgroupLimits:
        base = ROOT / _own_path(None).lstrip("/")
        if not _writable(base):
            raise OSError(f"{base} not writable")
        d = base / name
        d.mkdir()
        try:
            (d / "pids.max").write_text(str(pids))
            (d / "memory.max").write_text(str(mem))
            with contextlib.suppress(OSError):
                (d / "memory.swap.max").write_text("0")
            if cpu:
                (d / "cpu.max").write_text(f"{int(cpu * 100_000)} 100000")
        except OSError:
            d.rmdir()
            raise
        return cls([d], 2)

    @classmethod
    def _create_v1(cls, name: str, pids: int, mem: int, cpu: float | None) -> CgroupLimits:
        dirs: list[Path] = []
        try:
            for ctrl, files in (
                ("pids", {"pids.max": str(pids)}),
                ("memory", {"memory.limit_in_bytes": str(mem)}),
                ("cpu", {"cpu.cfs_quota_us": str(int(cpu * 100_000))} if cpu else {}),
            ):
                base = ROOT / ctrl / _own_path(ctrl).lstrip("/")
                if not _writable(base):
                    if ctrl == "pids":  # the one that matters: no fork-bomb cap, no cgroup at all
                        raise OSError(f"{base} not writable")
                    continue
                d = base / name
                d.mkdir()
                dirs.append(d)
                for fname, value in files.items():
                    (d / fname).write_text(value)
                if ctrl == "memory":
                    with contextlib.suppress(OSError):  # swap accounting may be off
                        (d / "memory.memsw.limit_in_bytes").write_text(str(mem))
        except OSError:
            cls(dirs, 1).remove()
            raise
        return cls(dirs, 1)

    def open_join_fds(self) -> None:
        """Open each group's cgroup.procs now, so the child only has to write to an fd."""
        self._fds = [os.open(d / "cgroup.procs", os.O_WRONLY) for d in self.dirs]

    def preexec(self) -> None:
        """Runs in the child between fork and exec: move it (and all it spawns) into the group."""
        pid = str(os.getpid()).encode()
        for fd in self._fds:
            os.write(fd, pid)

    def close_fds(self) -> None:
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds = []

    def oom_killed(self) -> bool:
        for d in self.dirs:
            for fname in ("memory.events", "memory.oom_control"):
                with contextlib.suppress(OSError):
                    for line in (d / fname).read_text().splitlines():
                        k, _, v = line.partition(" ")
                        if k == "oom_kill" and int(v) > 0:
                            return True
            with contextlib.suppress(OSError, ValueError):
                if d.name.startswith(_PREFIX) and "memory" in str(d):
                    if int((d / "memory.failcnt").read_text()) > 0:
                        return True
        return False

    def pids_exhausted(self) -> bool:
        for d in self.dirs:
            with contextlib.suppress(OSError):
                for line in (d / "pids.events").read_text().splitlines():
                    k, _, v = line.partition(" ")
                    if k == "max" and int(v) > 0:
                        return True
        return False

    def kill_all(self) -> None:
        """SIGKILL everything left in the group (v2: cgroup.kill; v1: walk cgroup.procs)."""
        import signal

        for d in self.dirs:
            if (d / "cgroup.kill").exists():
                with contextlib.suppress(OSError):
                    (d / "cgroup.kill").write_text("1")
                continue
            with contextlib.suppress(OSError):
                for pid in (d / "cgroup.procs").read_text().split():
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(int(pid), signal.SIGKILL)

    def remove(self) -> None:
        import time

        self.close_fds()
        for d in self.dirs:
            for _ in range(50):  # a group can only go once its last process has been reaped
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    self.kill_all()
                    time.sleep(0.02)
