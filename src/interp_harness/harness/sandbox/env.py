"""The environment of every process launched into a sandbox: only what the operator listed.

A sandboxed process (scoring worker, target service, agent host, FIND release check, a compose
daemon's child) and the launcher that starts it (bwrap, whose own init stays PID 1 inside the
sandbox, where any process can read its /proc/1/environ) never inherit the orchestrator's
environment: provider keys, API tokens, the database URL and the store's home live there. Each
launch passes an explicit environment built here, plus the variables its caller names.
"""

from __future__ import annotations

# one implementation each, shared with the target service and its FIND scripts (function_store
# cannot import harness)
from interp_harness.function_store.service.isolation import THREAD_ENV, make_undumpable, sandbox_env

__all__ = ["RESULT_FD_ENV", "THREAD_ENV", "launcher_env", "make_undumpable", "sandbox_env"]

# what bwrap itself runs with: it needs nothing (every path it runs is absolute)
LAUNCHER_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
# names the descriptor of a run's result channel, inside (Sandbox.run(result_channel=True))
RESULT_FD_ENV = "SANDBOX_RESULT_FD"


def launcher_env() -> dict[str, str]:
    """The environment of a launcher whose process lives on inside the sandbox (bwrap)."""
    return dict(LAUNCHER_ENV)
