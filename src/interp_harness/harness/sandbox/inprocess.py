"""The unsandboxed backend: unit tests only. It logs a warning on every start.

`run` executes argv as a plain subprocess (no shell, same limits on time and output, but no
isolation). `start_service` for the target service runs the app on a thread of this process,
listening on a Unix socket in a temp directory; other services run as plain subprocesses.
Subprocesses start with the minimal environment of interp_harness.harness.sandbox.env, as in a real sandbox
(no isolation is no reason to hand them the operator's keys).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from urllib.parse import quote

from interp_harness.harness.sandbox.base import (
    Limits,
    RunResult,
    Sandbox,
    SandboxError,
    ServiceHandle,
)
from interp_harness.harness.sandbox.bwrap import wait_healthy, write_files
from interp_harness.harness.sandbox.env import sandbox_env
from interp_harness.harness.sandbox.local import run_plain

log = logging.getLogger(__name__)
_WARNING = "InProcessSandbox: %s runs UNSANDBOXED (unit tests only, never for real agents)"


class InProcessSandbox(Sandbox):
    name = "inprocess"

    def __init__(self) -> None:
        self._services: dict[str, tuple] = {}

    def _files_dir(self, files: dict[str, bytes] | None) -> str:
        return write_files(files, "sbx-inproc-")

    def _run_command(self, argv, files, stdin, limits, result_channel) -> RunResult:  # type: ignore[no-untyped-def]
        log.warning(_WARNING, "a command")
        d = self._files_dir(files)
        try:
            argv = [a.replace("/sandbox/", d + "/") for a in argv]
            got = run_plain(argv, d, stdin, limits, result_channel)
            error = (
                f"timeout: killed after {limits.timeout_s:g} s"
                if got.timed_out
                else ("output limit (truncated)" if got.output_truncated else None)
            )
            return dataclasses.replace(got, error=error)
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def _start_service(self, argv, files, limits, env, forward_url) -> ServiceHandle:  # type: ignore[no-untyped-def]
        log.warning(_WARNING, "a service")
        limits = limits or Limits(timeout_s=20.0)
        d = self._files_dir(files)
        sock = os.path.join(d, "service.sock")
        env = dict(env or {})
        if argv[-2:] == ["-m", "interp_harness.function_store.service"]:
            import uvicorn

            from interp_harness.function_store.service.app import create_app
            from interp_harness.function_store.service.settings import ServiceSettings

            settings = ServiceSettings(targets_dir=Path(d), uds=sock, backbone_url=forward_url)
            server = uvicorn.Server(
                uvicorn.Config(
                    create_app(settings),
                    uds=sock,
                    log_level="warning",
                    lifespan="on",
                    loop="asyncio",
                )
            )
            thread = threading.Thread(target=server.run, daemon=True)
            thread.start()
            deadline = time.monotonic() + limits.timeout_s
            while not server.started:
                if not thread.is_alive() or time.monotonic() > deadline:
                    raise SandboxError("in-process target service failed to start")
                time.sleep(0.01)
            stopper = (server, thread)
        else:
            import interp_harness  # its copy (a checkout or site-packages) is the one imported

            root = os.path.dirname(os.path.dirname(os.path.realpath(interp_harness.__file__)))
            listed = {"PYTHONPATH": root, **env, "HARNESS_SERVICE_UDS": sock}
            if forward_url:
                listed["HARNESS_BACKBONE_URL"] = forward_url
            proc = subprocess.Popen(
                argv, cwd=d, env=sandbox_env(listed, home=d), start_new_session=True
            )
            wait_healthy(sock, proc, limits.timeout_s)
            stopper = proc
        url = "http+unix://" + quote(sock, safe="")
        self._services[url] = (stopper, d)
        return ServiceHandle(url=url, backend=self.name, meta={"socket": sock})

    def stop(self, handle: ServiceHandle) -> None:
        entry = self._services.pop(handle.url, None)
        if not entry:
            return
        stopper, d = entry
        if isinstance(stopper, tuple):
            server, thread = stopper
            server.should_exit = True
            thread.join(5)
        else:
            stopper.kill()
            stopper.wait()
        shutil.rmtree(d, ignore_errors=True)
