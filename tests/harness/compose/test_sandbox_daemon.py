"""The compose stack's sandbox daemon (harness sandbox daemon) and its `remote-*` backends, on a
real Unix socket in this process's machine (no containers: tests/harness/compose/test_compose_stack.py
runs the same code inside them)."""

from __future__ import annotations

import asyncio
import os
import tempfile
import threading
import time

import httpx
import pytest

from interp_harness.evaluator.sandbox_exec import CodeJob, ExecSettings, run_code_jobs
from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.service.client import TargetServiceClient
from interp_harness.harness.sandbox.base import Limits, SandboxError, get_sandbox
from interp_harness.harness.sandbox.code_runner import run_in_sandbox
from interp_harness.harness.sandbox.daemon import serve
from interp_harness.harness.sandbox.pool import ServicePool

F0 = "find-gen/numeric/s0/f00000"


def _answers(socket: str) -> bool:
    try:
        with httpx.Client(transport=httpx.HTTPTransport(uds=socket), timeout=3) as c:
            return c.get("http://daemon/healthz").status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="module")
def sock() -> str:
    path = os.path.join(tempfile.mkdtemp(prefix="daemon-test-"), "daemon.sock")
    threading.Thread(target=serve, args=(path,), daemon=True).start()
    deadline = time.monotonic() + 30
    while not _answers(path):
        assert time.monotonic() < deadline, "daemon did not answer"
        time.sleep(0.1)
    return path


def test_run_files_stdin_and_limits(sock: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HARNESS_EXEC_SOCKET", sock)
    sb = get_sandbox("remote-exec")
    r = sb.run(
        ["python3", "/sandbox/m.py"],
        files={"m.py": b"import os, sys\nprint(sys.stdin.read()[::-1], sorted(os.environ))"},
        stdin=b"abc",
    )
    assert r.returncode == 0 and r.error is None, r
    assert r.stdout.startswith(b"cba ") and b"HARNESS" not in r.stdout  # no caller environment
    r = sb.run(["python3", "-c", "x = bytearray(900 * 2**20)"], limits=Limits(memory_mb=300))
    assert r.returncode != 0 and r.error.startswith("memory limit"), r
    r = sb.run(["python3", "-c", "import time; time.sleep(30)"], limits=Limits(timeout_s=1))
    assert r.timed_out and r.error.startswith("timeout"), r
    r = sb.run(["python3", "-c", "print('x' * 5000)"], limits=Limits(max_output_bytes=100))
    assert r.output_truncated and len(r.stdout) <= 100
    with pytest.raises(SandboxError, match="HTTP 400.*invalid sandbox file name"):
        sb.run(["python3", "/sandbox/x.py"], files={"../x.py": b""})


def test_unread_stdin_does_not_outlast_the_time_limit(sock: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HARNESS_EXEC_SOCKET", sock)
    r = get_sandbox("remote-exec").run(
        ["python3", "-c", "import time; time.sleep(30)"],
        stdin=b"x" * 2**20,  # more than a pipe holds: the child never reads it
        limits=Limits(timeout_s=1),
    )
    assert r.timed_out and r.error.startswith("timeout"), r


def test_scoring_worker_through_the_daemon(sock: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HARNESS_EXEC_SOCKET", sock)
    jobs = [
        CodeJob(id="ok", code="def f(x):\n    return 2 * x\n", func_name="f", kind="number",
                inputs=["1", "2"]),
        CodeJob(id="net", code="import socket\ndef f(x):\n    socket.socket()\n    return x\n",
                func_name="f", kind="number", inputs=["1"]),
    ]  # fmt: skip
    ok, net = run_code_jobs(
        jobs, settings=ExecSettings(sandbox="remote-exec"), runner=run_in_sandbox
    )
    assert ok.status == "ok" and [r["v"][0] for r in ok.results] == [2.0, 4.0], ok
    assert net.status == "ok" and "err" in net.results[0], net  # seccomp: no sockets


def test_target_service_through_the_daemon(sock: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HARNESS_TARGETS_SOCKET", sock)
    target = Catalog().get(F0)
    pool = ServicePool(get_sandbox("remote-targets"))
    try:
        pool.serve([target])
        url = pool.url_for(F0)
        assert url.startswith("http+unix://")

        async def call() -> list:
            c = TargetServiceClient(url)
            try:
                return await c.call(F0, ["1", "2"])
            finally:
                await c.aclose()

        outs = asyncio.run(call())
        assert [o.error for o in outs] == [None, None] and all(o.output for o in outs), outs
    finally:
        pool.close()


def test_remote_backend_needs_its_socket(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("HARNESS_TARGETS_SOCKET", raising=False)
    with pytest.raises(SandboxError, match="HARNESS_TARGETS_SOCKET"):
        get_sandbox("remote-targets")
