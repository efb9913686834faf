"""The sandbox interface. Backends: bwrap (default), docker, inprocess (unit tests only)."""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field


@dataclass
class Limits:
    timeout_s: float = 10.0
    memory_mb: int = 512
    cpu_s: int | None = None  # CPU-time limit; None: derived from timeout_s
    max_procs: int = 64
    max_output_bytes: int = 1_000_000


@dataclass
class RunResult:
    returncode: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    output_truncated: bool = False
    error: str | None = None  # why it failed to run or was killed (e.g. "memory limit")
    result: bytes | None = None  # what it wrote on its result channel (run(result_channel=True))


@dataclass
class ServiceHandle:
    """A running service inside a sandbox, reachable at `url` (http+unix:// or http://)."""

    url: str
    backend: str
    meta: dict = field(default_factory=dict)


class SandboxError(RuntimeError):
    """The sandbox itself failed (could not start, service never answered): infrastructure."""


class Sandbox(ABC):
    name: str = ""

    def run(
        self,
        argv: list[str],
        *,
        files: dict[str, bytes] | None = None,
        stdin: bytes | None = None,
        limits: Limits | None = None,
        result_channel: bool = False,
    ) -> RunResult:
        """Run argv (never through a shell) with `files` readable inside at /sandbox/<name>.

        The environment inside is the backend's minimal one (interp_harness.harness.sandbox.env), never the
        caller's. `result_channel`: the program gets a write descriptor, named by
        $SANDBOX_RESULT_FD, that nothing else in the sandbox holds (not its init, not its stdout
        or stderr, which stay untrusted text); what it writes there is `RunResult.result`
        (capped at `limits.max_output_bytes`). A program that keeps it from its own children
        and makes itself undumpable (the scoring worker) has a channel they cannot write."""
        return self._run_command(argv, files, stdin, limits or Limits(), result_channel)

    @abstractmethod
    def _run_command(
        self, argv: list[str], files: dict[str, bytes] | None, stdin: bytes | None,
        limits: Limits, result_channel: bool,
    ) -> RunResult:  # fmt: skip
        """The backend's part of `run`, once the default limits are filled in."""

    def start_service(
        self,
        argv: list[str],
        *,
        files: dict[str, bytes] | None = None,
        limits: Limits | None = None,
        env: dict[str, str] | None = None,
        forward_url: str | None = None,
    ) -> ServiceHandle:
        """Start a long-running service; returns once it answers `GET /healthz`.

        The service listens where the backend says: `HARNESS_SERVICE_UDS` (a Unix socket path) or
        `HARNESS_SERVICE_PORT` (TCP, all interfaces of its private network). `env` adds variables;
        `forward_url` is the one extra endpoint it may reach (the backbone for entity/relation
        targets, the intervention service for neuron/RAVEL targets)."""
        return self._start_service(argv, files, limits, env, forward_url)

    @abstractmethod
    def _start_service(
        self, argv: list[str], files: dict[str, bytes] | None, limits: Limits | None,
        env: dict[str, str] | None, forward_url: str | None,
    ) -> ServiceHandle:  # fmt: skip
        """The backend's part of `start_service`; `limits` None: the backend's service default."""

    @abstractmethod
    def stop(self, handle: ServiceHandle) -> None: ...


_BACKENDS = {
    "bwrap": "interp_harness.harness.sandbox.bwrap:BwrapSandbox",
    "docker": "interp_harness.harness.sandbox.docker:DockerSandbox",
    "inprocess": "interp_harness.harness.sandbox.inprocess:InProcessSandbox",
    # the compose stack: daemons in the `targets` / `sandbox` containers (docs/compose.md)
    "remote-targets": "interp_harness.harness.sandbox.daemon:TargetsDaemon",
    "remote-exec": "interp_harness.harness.sandbox.daemon:ExecDaemon",
}


def get_sandbox(name: str = "bwrap", **options: object) -> Sandbox:
    if name not in _BACKENDS:
        raise ValueError(f"unknown sandbox backend {name!r}; known: {', '.join(_BACKENDS)}")
    module, cls = _BACKENDS[name].split(":")
    return getattr(importlib.import_module(module), cls)(**options)
