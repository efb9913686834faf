"""Sandboxes: one interface (run a command with limits, start a service, stop), three backends."""

from interp_harness.harness.sandbox.base import (
    Limits,
    RunResult,
    Sandbox,
    SandboxError,
    ServiceHandle,
    get_sandbox,
)

__all__ = ["Limits", "RunResult", "Sandbox", "SandboxError", "ServiceHandle", "get_sandbox"]
