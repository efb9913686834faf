"""The target service: answers calls for the targets it was given, returning outputs only.

It reads one Target JSON per file from `targets_dir` (written by the orchestrator into a place only
the sandbox can read), builds runners with `interp_harness.function_store.runtime.build_runner`, and never sends
anything of `Target.hidden` back: responses are `CallOutput`s, error texts are fixed strings or
runner messages about the input. Limits (inputs per call, input length, output size, call time)
give clear 4xx/5xx errors with a category.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from interp_harness.function_store.benchmark import UnknownFamily, benchmark
from interp_harness.function_store.call_clock import (
    CURRENT,
    CallClock,
    CallLimit,
    CallOverTime,
    call_limit,
)
from interp_harness.function_store.models import CallOutput, Target
from interp_harness.function_store.runtime import (
    NoBackboneConfigured,
    Runner,
    RunnerMissing,
    RuntimeContext,
    TargetUnavailable,
    build_runner,
)
from interp_harness.function_store.service.models import (
    CallRequest,
    CallResponse,
    Health,
    ServiceError,
)
from interp_harness.function_store.service.settings import ServiceSettings

log = logging.getLogger("interp_harness.function_store.service")


class CallFailed(Exception):
    def __init__(self, status: int, detail: str, category: str) -> None:
        super().__init__(detail)
        self.status, self.detail, self.category = status, detail, category


def load_targets(directory: Path) -> dict[str, Target]:
    targets: dict[str, Target] = {}
    for p in sorted(directory.glob("*.json")):
        t = Target.model_validate_json(p.read_bytes())
        targets[t.id] = t
    return targets


def _backbone_context(settings: ServiceSettings) -> RuntimeContext:
    """Neural-module targets reach the backbone through the one forwarded socket (bwrap) or the
    internal network (docker); `HARNESS_BACKBONE_URL` is then rewritten for clients inside."""
    ctx = RuntimeContext()
    url = settings.backbone_url
    if settings.backbone_uds:
        from urllib.parse import urlsplit, urlunsplit

        from interp_harness.function_store.service.forward import TcpToUnixForwarder

        fwd = TcpToUnixForwarder(settings.backbone_uds)
        fwd.start()
        u = urlsplit(url or "http://backbone/v1")
        url = urlunsplit((u.scheme or "http", f"127.0.0.1:{fwd.port}", u.path, u.query, ""))
        ctx.extra["backbone_forwarder"] = fwd
    if url:
        import os

        os.environ["HARNESS_BACKBONE_URL"] = url  # what neural runners read
        ctx.extra["backbone_url"] = url
    return ctx


class TargetService:
    def __init__(self, settings: ServiceSettings, targets: dict[str, Target]) -> None:
        self.settings = settings
        self.targets = targets
        self.ctx = _backbone_context(settings)
        # runners whose code must run alone (`exclusive`: imported scripts, see
        # interp_harness.function_store.service.isolation) queue here, in arrival order, before their call's
        # time limit starts: waiting for another target's script is not this target's slowness
        self._exclusive = asyncio.Lock()
        self._runners: dict[str, Runner] = {}
        self._unavailable: dict[str, str] = {}
        self._build_lock = threading.Lock()
        self.ready = False

    def runner(self, target_id: str) -> Runner:
        if target_id in self._runners:
            return self._runners[target_id]
        with self._build_lock:
            return self._build(target_id)

    def _build(self, target_id: str) -> Runner:
        if target_id in self._runners:
            return self._runners[target_id]
        if target_id in self._unavailable:
            raise CallFailed(503, self._unavailable[target_id], "target")
        target = self.targets.get(target_id)
        if target is None:
            raise CallFailed(404, f"target {target_id!r} is not served by this instance", "agent")
        try:
            runner = build_runner(target, self.ctx)
        except TargetUnavailable as e:
            self._unavailable[target_id] = str(e)
            raise CallFailed(503, str(e), "target") from None
        except RunnerMissing as e:  # an operator's install, said as it is (no target data in it)
            raise CallFailed(500, str(e), "target") from None
        except Exception as e:  # a broken spec is the target's fault, not the agent's
            log.exception("could not build runner for %s", target_id)
            raise CallFailed(
                500, f"target {target_id!r} failed to load: {type(e).__name__}", "target"
            ) from None
        self._runners[target_id] = runner
        return runner

    def preload(self) -> None:
        for tid in self.targets:
            try:
                self.runner(tid)
            except CallFailed as e:
                log.warning("not preloaded: %s", e.detail)
        self.ready = True

    def check_inputs(self, inputs: list[str]) -> None:
        s = self.settings
        if len(inputs) > s.max_inputs:
            raise CallFailed(
                413,
                f"too many inputs: {len(inputs)} in one call, the limit is {s.max_inputs}",
                "agent",
            )
        for i, x in enumerate(inputs):
            if len(x) > s.max_input_chars:
                raise CallFailed(
                    413,
                    f"input {i + 1} is {len(x)} characters long, the limit is {s.max_input_chars}",
                    "agent",
                )

    def limit(self, target_id: str, inputs: list[str]) -> CallLimit:
        """The operator's base, plus the budget the target's record declares for this call's
        size, under the ceiling."""
        s = self.settings
        family = self.targets[target_id].family if target_id in self.targets else ""
        try:
            budget = benchmark(family).call_budget if family else None
        except UnknownFamily:
            budget = None
        return call_limit(s.call_timeout_s, s.call_ceiling_s, inputs, family, budget)

    async def call(self, target_id: str, inputs: list[str]) -> list[CallOutput]:
        self.check_inputs(inputs)
        runner = self._runners.get(target_id) or await asyncio.to_thread(self.runner, target_id)
        s = self.settings
        queue = self._exclusive if getattr(runner, "exclusive", False) else contextlib.nullcontext()
        try:
            async with queue:
                outputs = await run_limited(self.limit(target_id, inputs), runner, inputs)
        except CallOverTime as e:
            raise CallFailed(504, str(e), "target") from None
        except NoBackboneConfigured as e:
            raise CallFailed(503, str(e), "infrastructure") from None
        except Exception as e:
            log.exception("runner for %s raised", target_id)
            raise CallFailed(500, f"the target failed: {type(e).__name__}", "target") from None
        size = sum(len((o.output or "").encode()) + len((o.error or "").encode()) for o in outputs)
        if size > s.max_output_bytes:
            raise CallFailed(
                413, f"output too large: {size} bytes, the limit is {s.max_output_bytes}", "agent"
            )
        return outputs


# Runner calls' threads. Not the loop's default executor (a few threads on a small machine): a
# model-backed call holds its thread while its request waits in the model service, and calls
# waiting for a thread would wait on each other (the clock starts only when a thread is free).
_RUNNER_THREADS = ThreadPoolExecutor(max_workers=64, thread_name_prefix="runner")


async def run_limited(limit: CallLimit, runner: Runner, inputs: list[str]) -> list[CallOutput]:
    """`runner.call(inputs)` on a worker thread, within `limit` (interp_harness.function_store.call_clock):
    raises CallOverTime when the counted time runs out while no model request is in flight, or
    at the ceiling. A runner that overruns keeps its worker thread; the call still answers on
    time."""
    loop = asyncio.get_running_loop()
    clock = CallClock(limit, started=False)
    changed = asyncio.Event()
    clock.on_change = lambda: loop.call_soon_threadsafe(changed.set)
    context = contextvars.copy_context()

    def work() -> list[CallOutput]:  # in the runner's thread, in its own copy of the context
        CURRENT.set(clock)
        clock.start()
        return runner.call(inputs)

    task = loop.run_in_executor(_RUNNER_THREADS, context.run, work)
    task.add_done_callback(lambda t: t.cancelled() or t.exception())  # retrieved if abandoned
    while True:
        changed.clear()
        now = time.monotonic()
        # not started, or a request in flight (its queue wait is known when it answers, and
        # checked then): only the ceiling applies
        until = clock.ceiling_at if clock.in_flight else clock.deadline
        if now >= until:
            task.cancel()  # a call still waiting for a thread never starts
            raise CallOverTime(clock.overrun(now) or clock.limit_message(now))
        waiter = asyncio.ensure_future(changed.wait())
        try:
            await asyncio.wait(
                {task, waiter}, timeout=until - now, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            waiter.cancel()
        if task.done():
            return task.result()


def create_app(
    settings: ServiceSettings | None = None, targets: dict[str, Target] | None = None
) -> FastAPI:
    settings = settings or ServiceSettings()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        loaded = targets if targets is not None else load_targets(settings.targets_dir)
        svc = TargetService(settings, loaded)
        app.state.service = svc
        if settings.preload:  # in the background: /healthz answers at once, calls wait per target
            threading.Thread(target=svc.preload, daemon=True, name="preload").start()
        else:
            svc.ready = True
        log.info("serving %d targets", len(loaded))
        yield

    app = FastAPI(
        title="interp-harness target service", lifespan=lifespan, docs_url=None, redoc_url=None
    )

    def error(status: int, detail: str, category: str) -> JSONResponse:
        return JSONResponse(
            ServiceError(detail=detail, category=category).model_dump(), status_code=status
        )

    @app.exception_handler(CallFailed)
    async def _failed(_: Request, e: CallFailed) -> JSONResponse:
        return error(e.status, e.detail, e.category)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, e: RequestValidationError) -> JSONResponse:
        first: dict[str, Any] = e.errors()[0] if e.errors() else {}
        where = ".".join(str(x) for x in first.get("loc", ()))
        return error(
            422,
            f"bad request body at {where}: {first.get('msg', 'invalid')} "
            '(expected {"inputs": ["1", "2"]})',
            "agent",
        )

    @app.get("/healthz", response_model=Health)
    async def healthz(request: Request) -> Health:
        svc = request.app.state.service
        return Health(targets=len(svc.targets), ready=svc.ready)

    @app.post(
        "/targets/{target_id:path}/call",
        response_model=CallResponse,
        responses={
            404: {"model": ServiceError},
            413: {"model": ServiceError},
            503: {"model": ServiceError},
            504: {"model": ServiceError},
        },
    )
    async def call(target_id: str, body: CallRequest, request: Request) -> CallResponse:
        outputs = await request.app.state.service.call(target_id, body.inputs)
        return CallResponse(target_id=target_id, outputs=outputs)

    return app
