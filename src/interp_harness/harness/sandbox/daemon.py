"""The sandbox daemon of the compose stack, and the `remote` backends that talk to it.

`harness sandbox daemon --socket PATH` runs inside a container with no network (the `targets` or
the `sandbox` service) and exposes the `local` backend over HTTP on a Unix socket in a volume
shared with the api container, which is the only party that can reach it. The api side uses
`RemoteSandbox` (`HARNESS_SANDBOX=remote-targets` for target services,
`HARNESS_EVAL_SANDBOX=remote-exec` for scoring agent-written code): the same Sandbox interface,
so the scheduler and the scorer do not know they run in compose.
"""

from __future__ import annotations

import base64
import os
from dataclasses import asdict

from pydantic import BaseModel, Field

from interp_harness.harness.sandbox.base import (
    Limits,
    RunResult,
    Sandbox,
    SandboxError,
    ServiceHandle,
)


class LimitsIn(BaseModel):
    timeout_s: float = Field(10.0, gt=0)
    memory_mb: int = Field(512, ge=16)
    cpu_s: int | None = None
    max_procs: int = 64
    max_output_bytes: int = Field(1_000_000, ge=1)


class RunIn(BaseModel):
    argv: list[str] = Field(min_length=1)
    files: dict[str, str] = {}  # name -> base64
    stdin: str | None = None  # base64
    limits: LimitsIn = LimitsIn()
    result_channel: bool = False


class RunOut(BaseModel):
    returncode: int | None
    stdout: str  # base64
    stderr: str
    timed_out: bool
    output_truncated: bool
    error: str | None
    result: str | None = None  # base64: what the program wrote on its result channel


class StartIn(BaseModel):
    argv: list[str] = Field(min_length=1)
    files: dict[str, str] = {}
    env: dict[str, str] = {}
    limits: LimitsIn = LimitsIn(timeout_s=30.0, memory_mb=2048)


class StartOut(BaseModel):
    url: str


class StopIn(BaseModel):
    url: str


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _unb64(files: dict[str, str]) -> dict[str, bytes]:
    return {k: base64.b64decode(v) for k, v in files.items()}


def create_app(socket_root: str):  # type: ignore[no-untyped-def]
    from fastapi import FastAPI, HTTPException
    from fastapi.concurrency import run_in_threadpool

    from interp_harness.harness.sandbox.local import LocalSandbox

    sb = LocalSandbox(socket_root=socket_root)
    app = FastAPI(title="interp-harness sandbox daemon", on_shutdown=[sb.stop_all])

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/run", response_model=RunOut)
    async def run(req: RunIn) -> RunOut:
        stdin = base64.b64decode(req.stdin) if req.stdin is not None else None
        try:
            r = await run_in_threadpool(
                sb.run,
                req.argv,
                files=_unb64(req.files),
                stdin=stdin,
                limits=Limits(**req.limits.model_dump()),
                result_channel=req.result_channel,
            )
        except ValueError as e:  # a file name that is not a plain relative path
            raise HTTPException(400, str(e)) from e
        result = _b64(r.result) if r.result is not None else None
        return RunOut(
            **{**asdict(r), "stdout": _b64(r.stdout), "stderr": _b64(r.stderr), "result": result}
        )

    @app.post("/services", response_model=StartOut)
    async def start(req: StartIn) -> StartOut:
        try:
            h = await run_in_threadpool(
                sb.start_service,
                req.argv,
                files=_unb64(req.files),
                env=req.env,
                limits=Limits(**req.limits.model_dump()),
            )
        except ValueError as e:
            raise HTTPException(400, str(e)) from e
        except SandboxError as e:
            raise HTTPException(503, str(e)) from e
        return StartOut(url=h.url)

    @app.post("/services/stop")
    async def stop(req: StopIn) -> dict[str, str]:
        await run_in_threadpool(sb.stop, ServiceHandle(url=req.url, backend="local"))
        return {"status": "stopped"}

    return app


def serve(socket: str) -> None:
    import uvicorn

    from interp_harness.harness.sandbox.env import make_undumpable

    # this process's children run untrusted code as the same uid: keep them out of its
    # descriptors (other runs' result channels, the api's connections) and its environment
    make_undumpable()
    if os.path.exists(socket):
        os.unlink(socket)
    root = os.path.dirname(socket)
    uvicorn.run(create_app(root), uds=socket, log_level="warning", access_log=False)


class RemoteSandbox(Sandbox):
    """A sandbox daemon reached over the Unix socket named by `socket_env`."""

    name = "remote"
    socket_env = "HARNESS_REMOTE_SOCKET"

    def __init__(self, socket: str | None = None) -> None:
        import httpx

        self.socket = socket or os.environ.get(self.socket_env, "")
        if not self.socket:
            raise SandboxError(f"{self.name}: set {self.socket_env} to the daemon's socket")
        self._forwarders: dict[str, tuple] = {}
        self._http = httpx.Client(
            transport=httpx.HTTPTransport(uds=self.socket), base_url="http://daemon", timeout=None
        )

    def _post(self, path: str, body: BaseModel, timeout_s: float) -> dict:
        import httpx

        try:
            r = self._http.post(path, json=body.model_dump(), timeout=timeout_s + 30)
        except httpx.HTTPError as e:
            raise SandboxError(f"{self.name} daemon at {self.socket}: {e}") from e
        if r.status_code != 200:
            raise SandboxError(f"{self.name} daemon: HTTP {r.status_code}: {r.text[:500]}")
        return r.json()

    @staticmethod
    def _limits(limits: Limits) -> LimitsIn:
        return LimitsIn(**asdict(limits))

    def _run_command(self, argv, files, stdin, limits, result_channel) -> RunResult:  # type: ignore[no-untyped-def]
        body = RunIn(
            argv=argv,
            files={k: _b64(v) for k, v in (files or {}).items()},
            stdin=_b64(stdin) if stdin is not None else None,
            limits=self._limits(limits),
            result_channel=result_channel,
        )
        out = RunOut(**self._post("/run", body, limits.timeout_s))
        return RunResult(
            out.returncode,
            base64.b64decode(out.stdout),
            base64.b64decode(out.stderr),
            out.timed_out,
            out.output_truncated,
            out.error,
            base64.b64decode(out.result) if out.result is not None else None,
        )

    def _start_service(self, argv, files, limits, env, forward_url) -> ServiceHandle:  # type: ignore[no-untyped-def]
        """Neural-module targets reach the backbone as under bwrap: through a Unix socket that
        this process (the api) forwards to `forward_url` and nowhere else (the daemon's
        container has no network)."""
        import uuid

        from interp_harness.function_store.service.forward import UnixToTcpForwarder

        limits = limits or Limits(timeout_s=30.0, memory_mb=2048)
        env = dict(env or {})
        forwarder = None
        if forward_url:
            path = os.path.join(os.path.dirname(self.socket), f"backbone-{uuid.uuid4().hex}.sock")
            forwarder = UnixToTcpForwarder(path, forward_url)
            forwarder.start()
            env |= {"HARNESS_BACKBONE_UDS": path, "HARNESS_BACKBONE_URL": forward_url}
        body = StartIn(
            argv=argv,
            files={k: _b64(v) for k, v in (files or {}).items()},
            env=env,
            limits=self._limits(limits),
        )
        try:
            out = StartOut(**self._post("/services", body, limits.timeout_s))
        except SandboxError:
            _close(forwarder, env.get("HARNESS_BACKBONE_UDS"))
            raise
        self._forwarders[out.url] = (forwarder, env.get("HARNESS_BACKBONE_UDS"))
        return ServiceHandle(url=out.url, backend=self.name)

    def stop(self, handle: ServiceHandle) -> None:
        forwarder, path = self._forwarders.pop(handle.url, (None, None))
        try:
            self._post("/services/stop", StopIn(url=handle.url), 10)
        finally:
            _close(forwarder, path)


def _close(forwarder, path: str | None) -> None:  # type: ignore[no-untyped-def]
    if forwarder is not None:
        forwarder.stop()
    if path and os.path.exists(path):
        os.unlink(path)


class TargetsDaemon(RemoteSandbox):
    name = "remote-targets"
    socket_env = "HARNESS_TARGETS_SOCKET"


class ExecDaemon(RemoteSandbox):
    name = "remote-exec"
    socket_env = "HARNESS_EXEC_SOCKET"
