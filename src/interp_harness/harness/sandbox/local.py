"""The `local` backend: plain child processes of a process that already runs inside a sandbox.

Used only by `harness sandbox daemon` inside the compose stack's `targets` and `sandbox`
containers, which are the wall (no network, read-only root, no capabilities, uid 65534, memory,
CPU and pids limits; see docs/compose.md). Here each command still gets its own files directory,
a new session, rlimits (address space, CPU seconds), a wall-clock limit, capped output, the
minimal environment of interp_harness.harness.sandbox.env and, when asked, a result channel (a pipe passed as a
descriptor above 2, as under bwrap). The daemon makes itself undumpable (`daemon.serve`): its
children, of the same uid, cannot open its descriptors or read its environment through /proc.
Services listen on a Unix socket under `socket_root`, a volume the api container shares.
"""

from __future__ import annotations

import dataclasses
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import quote

from interp_harness.harness.sandbox.base import (
    Limits,
    RunResult,
    Sandbox,
    SandboxError,
    ServiceHandle,
)
from interp_harness.harness.sandbox.bwrap import (
    Capped,
    diagnose,
    feed,
    kill_tree,
    wait_healthy,
    write_files,
)
from interp_harness.harness.sandbox.env import RESULT_FD_ENV, sandbox_env

INSIDE = "/sandbox/"  # where callers expect their files (argv and env are rewritten to the dir)


def _rlimits(limits: Limits):  # type: ignore[no-untyped-def]
    mem = limits.memory_mb * 1024 * 1024
    cpu = limits.cpu_s or int(limits.timeout_s) + 1

    def apply() -> None:  # runs in the child between fork and exec
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


def run_plain(  # type: ignore[no-untyped-def]
    argv: list[str],
    cwd: str,
    stdin: bytes | None,
    limits: Limits,
    result_channel: bool,
    preexec_fn=None,
) -> RunResult:
    """`argv` as a plain subprocess of this one in `cwd` (no namespaces: the backends that run
    inside a container or for development), with a minimal environment, capped output, the
    timeout, and a private result channel when asked; `error` is left for the caller."""
    rfd, wfd = os.pipe() if result_channel else (-1, -1)
    try:
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=sandbox_env({RESULT_FD_ENV: str(wfd)} if result_channel else {}, home=cwd),
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                preexec_fn=preexec_fn,  # noqa: PLW1509 - rlimits only
                pass_fds=(wfd,) if result_channel else (),
            )
        finally:
            if result_channel:
                os.close(wfd)
        out = Capped(proc.stdout, limits.max_output_bytes)
        err = Capped(proc.stderr, limits.max_output_bytes)
        res = None
        if result_channel:  # the reader owns the read end from here on
            res, rfd = Capped(open(rfd, "rb"), limits.max_output_bytes), -1  # noqa: SIM115
        if stdin is not None:  # fed from a thread: a child that never reads it still times out
            threading.Thread(target=feed, args=(proc.stdin, stdin), daemon=True).start()
        try:
            rc, timed_out = proc.wait(timeout=limits.timeout_s), False
        except subprocess.TimeoutExpired:
            kill_tree(proc, None)
            rc, timed_out = proc.wait(), True
        so, se = out.join(), err.join()
        trunc = out.truncated or err.truncated or bool(res and res.truncated)
        result = res.join() if res else None
        return RunResult(None if timed_out else rc, so, se, timed_out, trunc, None, result)
    finally:
        if rfd >= 0:
            os.close(rfd)


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

    def _run_command(self, argv, files, stdin, limits, result_channel) -> RunResult:  # type: ignore[no-untyped-def]
        d = self._files_dir(files)
        try:
            argv = [a.replace(INSIDE, d + "/") for a in _python(argv)]
            got = run_plain(argv, d, stdin, limits, result_channel, preexec_fn=_rlimits(limits))
            rc = -9 if got.returncode is None else got.returncode  # None: killed on timeout
            error = diagnose(rc, got.timed_out, got.stderr, None, limits)
            if error is None and got.output_truncated:
                error = "output limit (truncated)"
            return dataclasses.replace(got, error=error)
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def _start_service(self, argv, files, limits, env, forward_url) -> ServiceHandle:  # type: ignore[no-untyped-def]
        if forward_url:  # this container has no network: the caller forwards a socket (env)
            raise SandboxError("the local backend reaches a backbone only through env sockets")
        limits = limits or Limits(timeout_s=30.0, memory_mb=2048)
        d = self._files_dir(files)
        sock_dir = tempfile.mkdtemp(prefix="svc-", dir=self.socket_root)
        sock = os.path.join(sock_dir, "service.sock")
        environ = sandbox_env(home=d)
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
            wait_healthy(sock, proc, limits.timeout_s)
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
