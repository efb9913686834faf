"""The sandbox interface and the registry of every backend that confines code (`BACKENDS`).

A backend offers some of three operations (`Sandbox.offers`): `run` a command to its end,
start a `service` (HTTP, until stopped), start a `session` (a long-lived process whose stdin and
stdout are the caller's channel: the lab's kernel). The registry: `bwrap` (default), `docker`,
`inprocess` (unit tests only), `local` (inside a container that is already the wall: the compose
daemons), `remote-targets` and `remote-exec` (the compose daemons' clients), and the lab's
`lab-bwrap` and `lab-docker`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import IO, Any, ClassVar

from interp_harness.harness.sandbox.session import Session


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


# each operation -> the hooks a backend that offers it implements
_HOOKS: Mapping[str, tuple[str, ...]] = {
    "run": ("_run_command",),
    "service": ("_start_service", "stop"),
    "session": ("_start_session",),
}


class Sandbox:
    name: str = ""
    offers: ClassVar[frozenset[str]] = frozenset({"run", "service"})

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A backend implements the hooks of what it offers (checked when its class is made, as
        abstract methods would be, but only for its own operations)."""
        super().__init_subclass__(**kwargs)
        for op in cls.offers:
            for hook in _HOOKS[op]:
                if getattr(cls, hook) is getattr(Sandbox, hook):
                    raise TypeError(f"{cls.__name__} offers {op!r} but does not define {hook}")

    def _not_offered(self, op: str) -> SandboxError:
        offers = ", ".join(sorted(self.offers))
        return SandboxError(f"sandbox backend {self.name!r} does not {op}; it offers: {offers}")

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

        The environment inside is the backend's minimal one (interp_harness.harness.sandbox.env),
        never the caller's. `result_channel`: the program gets a write descriptor, named by
        $SANDBOX_RESULT_FD, that nothing else in the sandbox holds (not its init, not its stdout
        or stderr, which stay untrusted text); what it writes there is `RunResult.result`
        (capped at `limits.max_output_bytes`). A program that keeps it from its own children
        and makes itself undumpable (the scoring worker) has a channel they cannot write."""
        return self._run_command(argv, files, stdin, limits or Limits(), result_channel)

    def _run_command(
        self, argv: list[str], files: dict[str, bytes] | None, stdin: bytes | None,
        limits: Limits, result_channel: bool,
    ) -> RunResult:  # fmt: skip
        """The backend's part of `run`, once the default limits are filled in."""
        raise self._not_offered("run commands")

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

    def _start_service(
        self, argv: list[str], files: dict[str, bytes] | None, limits: Limits | None,
        env: dict[str, str] | None, forward_url: str | None,
    ) -> ServiceHandle:  # fmt: skip
        """The backend's part of `start_service`; `limits` None: the backend's service default."""
        raise self._not_offered("start services")

    def stop(self, handle: ServiceHandle) -> None:
        raise self._not_offered("start services")

    async def start_session(
        self, files: dict[str, bytes], *, main: str, limits: Limits, stderr: IO[bytes]
    ) -> Session:
        """Start the Python program `files[main]` (isolated mode, `-I`) as a long-lived process
        whose stdin and stdout are pipes to the caller and whose stderr goes to `stderr`;
        `files` read-only where the backend puts them. `limits`: memory, processes, and the
        size of what it may write. Returns once the process is started; SandboxError when it
        cannot be. The caller kills it through `Session.jail` and releases the jail."""
        return await self._start_session(files, main, limits, stderr)

    async def _start_session(
        self, files: dict[str, bytes], main: str, limits: Limits, stderr: IO[bytes]
    ) -> Session:
        raise self._not_offered("start sessions")


# name -> "module:Class", imported on first use (optional backends import their own deps)
BACKENDS: Mapping[str, str] = {
    "bwrap": "interp_harness.harness.sandbox.bwrap:BwrapSandbox",
    "docker": "interp_harness.harness.sandbox.docker:DockerSandbox",
    "inprocess": "interp_harness.harness.sandbox.inprocess:InProcessSandbox",
    # plain child processes, for a process already inside the wall (the compose daemons)
    "local": "interp_harness.harness.sandbox.local:LocalSandbox",
    # the compose stack: daemons in the `targets` / `sandbox` containers (docs/compose.md)
    "remote-targets": "interp_harness.harness.sandbox.daemon:TargetsDaemon",
    "remote-exec": "interp_harness.harness.sandbox.daemon:ExecDaemon",
    # the lab's sessions (harness/lab/): they bind its kernel and packages, so they live with
    # the lab and are named here by string, as records name their parts; only the lab asks
    "lab-bwrap": "interp_harness.harness.lab.sandbox:BwrapLabSandbox",
    "lab-docker": "interp_harness.harness.lab.docker_lab:DockerLabSandbox",
}


def sandbox_class(name: str) -> type[Sandbox]:
    if name not in BACKENDS:
        raise ValueError(f"unknown sandbox backend {name!r}; known: {', '.join(BACKENDS)}")
    module, cls = BACKENDS[name].split(":")
    return getattr(importlib.import_module(module), cls)


def get_sandbox(name: str = "bwrap", **options: object) -> Sandbox:
    return sandbox_class(name)(**options)
