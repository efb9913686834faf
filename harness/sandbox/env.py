"""The environment of every process launched into a sandbox: only what the operator listed.

A sandboxed process (scoring worker, target service, agent host, FIND release check, a compose
daemon's child) and the launcher that starts it (bwrap, whose own init stays PID 1 inside the
sandbox, where any process can read its /proc/1/environ) never inherit the orchestrator's
environment: provider keys, API tokens, the database URL and the store's home live there. Each
launch passes an explicit environment built here, plus the variables its caller names.
"""

from __future__ import annotations

import os
import sys

# one implementation, shared with the target service (which cannot import harness)
from function_store.service.isolation import make_undumpable

__all__ = ["RESULT_FD_ENV", "launcher_env", "make_undumpable", "sandbox_env"]

# BLAS/OpenMP pools would otherwise start one thread per host core
THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
# what bwrap itself runs with: it needs nothing (every path it runs is absolute)
LAUNCHER_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
# names the descriptor of a run's result channel, inside (Sandbox.run(result_channel=True))
RESULT_FD_ENV = "SANDBOX_RESULT_FD"


def launcher_env() -> dict[str, str]:
    """The environment of a launcher whose process lives on inside the sandbox (bwrap)."""
    return dict(LAUNCHER_ENV)


def sandbox_env(
    *listed: dict[str, str] | None, home: str = "/tmp", python: str | None = None
) -> dict[str, str]:
    """A sandboxed program's environment: a PATH that finds `python` (default: this
    interpreter), HOME, locale, one-thread BLAS, then the `listed` variables (the operator's
    and the backend's, later ones winning). Nothing is read from os.environ."""
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
