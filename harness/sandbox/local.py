"""The `local` backend: plain child processes of a process that already runs inside a sandbox.

Used only by `harness sandbox daemon` inside the compose stack's `targets` and `sandbox`
containers, which are the wall (no network, read-only root, no capabilities, uid 65534, memory,
CPU and pids limits; see docs/compose.md). Here each command still gets its own files directory,
a new session, rlimits (address space, CPU seconds), a wall-clock limit and capped output.
Services listen on a Unix socket under `socket_root`, a volume the api container shares.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import quote

from harness.sandbox.base import Limits, RunResult, Sandbox, SandboxError, ServiceHandle
from harness.sandbox.bwrap import (
    _Capped,
    _diagnose,
    _feed,
    _kill_tree,
    _wait_healthy,
    write_files,
)

INSIDE = "/sandbox/"  # where callers expect their files (argv and env are rewritten to the dir)


def _rlimits(limits: Limits):  # type: ignore[no-untyped-def]
    mem = limits.memory_mb * 1024 * 1024
    cpu = limits.cpu_s or int(limits.timeout_s) + 1

    def apply() -> None:  # runs in the child between fork and exec
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


def _python(argv: list[str]) -> list[str]:
    """The caller's interpreter path may differ from ours: python commands use this one."""
    if argv and Path(argv[0]).name.startswith("python"):
        return [sys.executable, *argv[1:]]
    return list(argv)


class LocalSandbox(Sandbox):
    name = "local"

    def __init__(self, socket_root: str | None = None) -> None:
        self.socket_root = socket_root or tempfile.gettempdir()
        self._services: dict[str, tuple[subprocess.Popen, str, str]] = {}

    def _files_dir(self, files: dict[str, bytes] | None) -> str:
        return write_files(files, "sbx-local-")

    def run(self, argv, *, files=None, stdin=None, limits=None) -> RunResult:  # type: ignore[no-untyped-def]
        limits = limits or Limits()
        d = self._files_dir(files)
        try:
            argv = [a.replace(INSIDE, d + "/") for a in _python(argv)]
            proc = subprocess.Popen(
                argv,
                cwd=d,
                env={"PATH": "/usr/bin:/bin", "HOME": d, "PYTHONDONTWRITEBYTECODE": "1"},
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                preexec_fn=_rlimits(limits),
            )
            out = _Capped(proc.stdout, limits.max_output_bytes)
            err = _Capped(proc.stderr, limits.max_output_bytes)
            if stdin is not None:  # fed from a thread: a child that never reads it still times out
                threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True).start()
            try:
                rc, timed_out = proc.wait(timeout=limits.timeout_s), False
            except subprocess.TimeoutExpired:
                _kill_tree(proc, None)
                rc, timed_out = proc.wait(), True
            so, se = out.join(), err.join()
            trunc = out.truncated or err.truncated
            error = _diagnose(rc, timed_out, se, None, limits)
            if error is None and trunc:
                error = "output limit (truncated)"
            return RunResult(None if timed_out else rc, so, se, timed_out, trunc, error)
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def start_service(  # type: ignore[no-untyped-def]
        self, argv, *, files=None, limits=None, env=None, forward_url=None
    ) -> ServiceHandle:
        if forward_url:  # this container has no network: the caller forwards a socket (env)
            raise SandboxError("the local backend reaches a backbone only through env sockets")
        limits = limits or Limits(timeout_s=30.0, memory_mb=2048)
        d = self._files_dir(files)
        sock_dir = tempfile.mkdtemp(prefix="svc-", dir=self.socket_root)
        sock = os.path.join(sock_dir, "service.sock")
        environ = {"PATH": "/usr/bin:/bin", "HOME": d, "PYTHONDONTWRITEBYTECODE": "1"}
        for k, v in (env or {}).items():
            environ[k] = v.replace(INSIDE.rstrip("/"), d) if v.startswith(INSIDE.rstrip("/")) else v
        environ["HARNESS_SERVICE_UDS"] = sock
        environ.pop("HARNESS_DATA_DIR", None)  # the caller's path; weights travel as files
        log = open(os.path.join(d, "service.log"), "wb")  # noqa: SIM115 - the child keeps it
        proc = subprocess.Popen(
            _python(argv),
            cwd=d,
            env=environ,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_rlimits(Limits(timeout_s=10**6, memory_mb=limits.memory_mb)),
        )
        log.close()
        url = "http+unix://" + quote(sock, safe="")
        self._services[url] = (proc, d, sock_dir)
        try:
            _wait_healthy(sock, proc, limits.timeout_s)
        except SandboxError:
            self.stop(ServiceHandle(url=url, backend=self.name))
            raise
        return ServiceHandle(url=url, backend=self.name, meta={"socket": sock, "pid": proc.pid})

    def stop(self, handle: ServiceHandle) -> None:
        entry = self._services.pop(handle.url, None)
        if not entry:
            return
        proc, d, sock_dir = entry
        try:
            os.killpg(proc.pid, 9)
        except ProcessLookupError:
            pass
        proc.wait()
        shutil.rmtree(d, ignore_errors=True)
        shutil.rmtree(sock_dir, ignore_errors=True)

    def stop_all(self) -> None:
        for url in list(self._services):
            self.stop(ServiceHandle(url=url, backend=self.name))
