"""What keeps target code inside a service's sandbox away from the service and from each other.

Target code (a third-party FIND script) runs as a child of the service, with the same uid. So:
* the service is undumpable before any target code runs: a process of the same uid can then not
  open its /proc/<pid>/fd/* (its listening socket, the pipes of other scripts' outputs), grab
  them with pidfd_getfd, read its environ or write its memory;
* the service is a child subreaper, so whatever a script leaves behind (a daemon that forked
  away) stays its descendant: before each script runs, every descendant of the service is killed,
  and scripts run one at a time. A script therefore never runs beside, or after, another script's
  leftovers, which could otherwise write into its output pipe or its files.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator

# BLAS/OpenMP pools would otherwise start one thread per host core
THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37


def _prctl(option: int, arg: object = 0) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    rc = libc.prctl(option, arg, 0, 0, 0)
    if rc != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")
    return rc


def sandbox_env(
    *listed: dict[str, str] | None, home: str = "/tmp", python: str | None = None
) -> dict[str, str]:
    """A sandboxed program's environment: a PATH that finds `python` (default: this
    interpreter), HOME, locale, one-thread BLAS, then the `listed` variables (the operator's
    and the backend's, later ones winning). Nothing is read from os.environ, which outside a
    sandbox holds the operator's keys."""
    py_dir = os.path.dirname(os.path.realpath(python or sys.executable))
    env = {
        "PATH": f"{py_dir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        **THREAD_ENV,
    }
    for extra in listed:
        env.update(extra or {})
    return env


def make_undumpable() -> None:
    """PR_SET_DUMPABLE 0 for this process: another process of the same uid without
    CAP_SYS_PTRACE can no longer open its /proc/<pid>/fd/*, environ or mem, nor pidfd_getfd."""
    _prctl(_PR_SET_DUMPABLE, 0)


def become_subreaper() -> None:
    """Orphaned descendants are re-parented to this process instead of the namespace's init."""
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def is_subreaper() -> bool:
    flag = ctypes.c_int(0)
    with contextlib.suppress(OSError):
        _prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(flag))
    return bool(flag.value)


def _parents() -> dict[int, int]:
    out: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses
        fields = stat[stat.rfind(b")") + 2 :].split()
        with contextlib.suppress(IndexError, ValueError):
            out[int(name)] = int(fields[1])
    return out


def descendants(root: int) -> list[int]:
    """Every live descendant of `root` (from /proc's parent links)."""
    children: dict[int, list[int]] = {}
    for pid, ppid in _parents().items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def kill_descendants(rounds: int = 50) -> int:
    """SIGKILL every descendant of this process (again, while some fork), and reap the ones that
    were re-parented here. Returns how many were killed."""
    me, killed = os.getpid(), 0
    for _ in range(rounds):
        pids = descendants(me)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
        for pid in pids:  # our own children only (the others are reaped by their parents)
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, 0)
        time.sleep(0.001)
    return killed


_GATE = threading.Lock()


@contextlib.contextmanager
def script_gate() -> Iterator[None]:
    """Hold while a target script runs: one script at a time, and, in a service that is a
    subreaper (the sandboxed target service), nothing of an earlier script left alive. Outside
    such a service (an in-process runner in tests) only the one-at-a-time part applies: this
    process's other children are not a script's leftovers."""
    with _GATE:
        sweep = is_subreaper()
        if sweep:
            kill_descendants()
        try:
            yield
        finally:
            if sweep:
                kill_descendants()
