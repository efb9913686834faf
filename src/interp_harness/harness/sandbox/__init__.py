"""Sandboxes: one interface (run a command with limits, start and stop a service, start a
session: a long-lived process on a channel) and one registry of every backend that confines code
(`BACKENDS` in base.py: bwrap, docker, inprocess, local, remote-targets, remote-exec, and the
lab's lab-bwrap and lab-docker). Each backend says which operations it offers (`offers`)."""

from interp_harness.harness.sandbox.base import (
    BACKENDS,
    Limits,
    RunResult,
    Sandbox,
    SandboxError,
    ServiceHandle,
    get_sandbox,
    sandbox_class,
)

__all__ = [
    "BACKENDS",
    "Limits",
    "RunResult",
    "Sandbox",
    "SandboxError",
    "ServiceHandle",
    "get_sandbox",
    "sandbox_class",
]
