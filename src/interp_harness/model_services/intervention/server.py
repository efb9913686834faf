"""The intervention service: FastAPI over `Engine`, one model per process.

Routes: `GET /health`, `GET /v1/models`, `POST /v1/tokenize`, `POST /v1/activations`,
`POST /v1/interchange`, `POST /v1/generate`, `GET|POST /v1/featurizers`,
`DELETE /v1/featurizers/{id}`, `GET /v1/saes` (the SAELens SAEs `/v1/activations` may encode with);
with a folder of compiled transformers, `/v1/circuits/...` (circuits.py), also without a language
model (`--model none`).

The model runs on one worker thread. Concurrent requests queue up; while the model is busy,
queued requests of the same kind and the same settings (component, layers, sites, ...) are merged
into one engine call, as the backbone server groups chat requests (activations requests naming
different SAEs differ in their settings, so they are never merged). Bad input is a 400 with a
message; running out of GPU memory is a 503 (the caches are emptied and serving goes on); any
other failure is a 500 for that request only.

Work is bounded before it reaches the model: a request's tokens (texts, sources, mean texts, new
tokens) are counted by the tokenizer against `max_request_tokens` (400 past it), and at most
`max_queue_tokens` of them wait or run (503 with Retry-After past it; a request of more than that
alone can never be served: 400). Before any tokenizing, a request body over `max_body_mib` is a
413 and a text too long to be within `max_text_tokens` in any tokenization (its characters past
the limit times the longest token) is a 400; tokenizing runs on worker threads, so `/health` and
other requests are answered meanwhile. A request whose client
disconnects is dropped from the queue, or stopped at its next micro-batch (a merged group stops
when none of its callers is left). Malformed JSON (NaN, lone surrogates) is a 400 on every route.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from interp_harness.model_services.backbone.engine import BadRequest
from interp_harness.model_services.backbone.guards import (
    ClientGone,
    cancel_on_disconnect,
    describe_errors,
    off_loop,
    worker_app,
)
from interp_harness.model_services.body_limit import DEFAULT_MAX_BODY_MIB
from interp_harness.model_services.intervention import schemas as S
from interp_harness.model_services.intervention.circuits import (
    CircuitStore,
    add_circuits,
    circuits_app,
    default_circuits_dir,
)
from interp_harness.model_services.intervention.engine import CANCEL, Cancelled, Engine
from interp_harness.model_services.intervention.featurizers import FeaturizerError
from interp_harness.model_services.intervention.saelens import (
    SAEConfigError,
    SAERegistry,
    default_sae_dir,
)
from interp_harness.model_services.queue_worker import NeverFits, QueueFull, QueueWorker

log = logging.getLogger(__name__)

NO_MODEL = "none"  # `--model none`: no language model, the compiled transformers only


class Overloaded(RuntimeError):
    """Out of (GPU) memory: the request may succeed later or smaller."""


def _expand(positions: Any, n: int) -> list:
    return positions if isinstance(positions, list) else [positions] * n


def _merge(kind: str, reqs: list[BaseModel]) -> tuple[BaseModel, list[int]] | None:
    """One request standing for several of the same kind and settings, and each one's size; None
    when they cannot be merged."""
    if kind == "activations":
        sig = [r.model_dump(exclude={"texts", "positions"}) for r in reqs]
        if any(s != sig[0] for s in sig):
            return None
        sizes = [len(r.texts) for r in reqs]
        merged = reqs[0].model_copy(
            update={
                "texts": [t for r in reqs for t in r.texts],
                "positions": [p for r in reqs for p in _expand(r.positions, len(r.texts))],
            }
        )
        return merged, sizes
    if kind == "interchange":
        site_keys = {"base_positions", "source_positions"}
        sig = [
            (
                r.model_dump(exclude={"examples", "sites"}),
                [s.model_dump(exclude=site_keys) for s in r.sites],
            )
            for r in reqs
        ]
        if any(s != sig[0] for s in sig):
            return None
        sizes = [len(r.examples) for r in reqs]
        sites = []
        for j, s in enumerate(reqs[0].sites):
            bp = [p for r in reqs for p in _expand(r.sites[j].base_positions, len(r.examples))]
            sp = [
                p
                for r in reqs
                for p in _expand(
                    r.sites[j].source_positions
                    if r.sites[j].source_positions is not None
                    else r.sites[j].base_positions,
                    len(r.examples),
                )
            ]
            sites.append(s.model_copy(update={"base_positions": bp, "source_positions": sp}))
        examples = [e for r in reqs for e in r.examples]
        return reqs[0].model_copy(update={"examples": examples, "sites": sites}), sizes
    if kind == "generate":
        if any(
            r.model_dump(exclude={"prompts"}) != reqs[0].model_dump(exclude={"prompts"})
            for r in reqs
        ):
            return None
        sizes = [len(r.prompts) for r in reqs]
        return reqs[0].model_copy(update={"prompts": [p for r in reqs for p in r.prompts]}), sizes
    return None


def _split(kind: str, resp: Any, sizes: list[int]) -> list[Any]:
    out, i = [], 0
    for n in sizes:
        out.append(resp.model_copy(update={"results": resp.results[i : i + n]}))
        i += n
    return out


class Batcher(QueueWorker[tuple[str, BaseModel, float]]):
    """Runs engine calls on one worker thread, merging queued requests where it can. Each reply
    says how long its request waited for the model (`queue_s`): from joining the queue to its
    engine call, plus the share of a merged call spent on the other requests' items."""

    def __init__(
        self, engine: Engine, max_items: int = 1024, max_queue_tokens: int | None = None
    ) -> None:
        super().__init__(max_queue_tokens)
        self.engine = engine
        self.max_items = max_items

    async def submit(self, kind: str, req: BaseModel, tokens: int = 1) -> Any:
        return await self._enqueue((kind, req, time.monotonic()), tokens, "tokens of work")

    def _fn(self, kind: str) -> Callable[[Any], Any]:
        return {
            "activations": self.engine.activations,
            "interchange": self.engine.interchange,
            "generate": self.engine.generate,
        }[kind]

    async def _run(self) -> None:
        pending: list[tuple[tuple[str, BaseModel, float], asyncio.Future]] = []
        while True:
            if not pending:
                pending.append(await self._queue.get())
            while not self._queue.empty():
                pending.append(self._queue.get_nowait())
            pending = self.live(pending)  # requests whose client went away are dropped
            if not pending:
                continue
            kind = pending[0][0][0]
            group = [p for p in pending if p[0][0] == kind][: self.max_items]
            pending = [p for p in pending if all(p is not g for g in group)]
            await self._serve(kind, group)

    async def _serve(
        self, kind: str, group: list[tuple[tuple[str, BaseModel, float], asyncio.Future]]
    ) -> None:
        group = self.live(group)
        if not group:
            return
        merged = _merge(kind, [g[0][1] for g in group]) if len(group) > 1 else None
        if merged is None and len(group) > 1:
            for g in group:
                await self._serve(kind, [g])
            return
        req, sizes = merged if merged else (group[0][0][1], [0])
        stop = threading.Event()  # set once none of the group's callers waits any more
        left = [len(group)]

        def _one_done(_: asyncio.Future) -> None:
            left[0] -= 1
            if left[0] == 0:
                stop.set()

        for _, fut in group:
            fut.add_done_callback(_one_done)
        token = CANCEL.set(stop)
        began = time.monotonic()
        try:
            resp = await asyncio.to_thread(_run_engine, self.engine, self._fn(kind), req)
        except Cancelled:
            return  # every caller has gone; nothing to answer
        except Exception as e:
            if len(group) > 1 and not isinstance(e, Overloaded):
                for g in group:  # one bad request must not fail its neighbours: retry alone
                    await self._serve(kind, [g])
                return
            for _, fut in group:
                if not fut.done():
                    fut.set_exception(e)
            return
        finally:
            CANCEL.reset(token)
            for _, fut in group:
                fut.remove_done_callback(_one_done)
        took = time.monotonic() - began
        parts = _split(kind, resp, sizes) if merged else [resp]
        for (item, fut), part, n in zip(group, parts, sizes, strict=True):
            others = took * (1 - n / sum(sizes)) if merged else 0.0
            waited = round(began - item[2] + others, 3)
            if not fut.done():
                fut.set_result(part.model_copy(update={"queue_s": waited}))


def _run_engine(engine: Engine, fn: Callable[[Any], Any], req: Any) -> Any:
    try:
        return fn(req)
    except torch.OutOfMemoryError as e:
        engine.reset_hooks()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        raise Overloaded(
            f"out of memory on the model's device; send fewer or shorter texts ({e})"
        ) from e
    except BaseException:
        engine.reset_hooks()  # a pass that raised mid-forward may have left pyvene's hooks
        raise


def _error(status: int, message: str, kind: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind}}, status)


def create_app(engine: Engine, circuits: CircuitStore | None = None) -> FastAPI:
    """The service over `engine`; with `circuits`, also its compiled models' routes."""
    lim = engine.limits
    batcher = Batcher(engine, max_items=lim.max_texts, max_queue_tokens=lim.max_queue_tokens)

    app = worker_app(
        "interp-harness intervention service",
        batcher,
        max_body_mib=lim.max_body_mib,
        engine=engine,
    )

    @app.exception_handler(BadRequest)
    async def _bad(_, exc: BadRequest) -> JSONResponse:
        return _error(400, str(exc), "invalid_request_error")

    @app.exception_handler(FeaturizerError)
    async def _bad_featurizer(_, exc: FeaturizerError) -> JSONResponse:
        return _error(400, str(exc), "invalid_request_error")

    @app.exception_handler(RequestValidationError)
    async def _invalid(_, exc: RequestValidationError) -> JSONResponse:
        return _error(400, describe_errors(exc.errors()), "invalid_request_error")

    @app.exception_handler(Overloaded)
    async def _oom(_, exc: Overloaded) -> JSONResponse:
        return _error(503, str(exc), "overloaded")

    @app.exception_handler(QueueFull)
    async def _full(_, exc: QueueFull) -> JSONResponse:
        r = _error(503, str(exc), "server_overloaded")
        r.headers["Retry-After"] = str(exc.retry_after_s)
        return r

    @app.exception_handler(NeverFits)
    async def _never(_, exc: NeverFits) -> JSONResponse:
        return _error(400, str(exc), "invalid_request_error")  # retrying can never help

    @app.exception_handler(ClientGone)
    async def _gone(_, exc: ClientGone) -> JSONResponse:
        return _error(499, "client closed the request", "client_closed_request")

    @app.exception_handler(Exception)
    async def _internal(_, exc: Exception) -> JSONResponse:
        log.exception("request failed")
        return _error(500, f"{type(exc).__name__}: {exc}", "internal_error")

    if circuits is not None:
        add_circuits(app, circuits)

    async def _submit(request: Request, kind: str, req: BaseModel) -> Any:
        # 400 past the per-request bound; tokenizes, so off the event loop
        tokens = await off_loop(engine.request_tokens, kind, req)
        batcher.admit(tokens, "tokens of work")  # 503 at once when the queue is full
        return await cancel_on_disconnect(request, batcher.submit(kind, req, tokens))

    @app.get("/health")
    async def health() -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": "ok",
            "model": engine.m.name,
            "device": str(engine.m.device),
        }
        if engine.m.device.type == "cuda":
            out["peak_gpu_memory_mib"] = torch.cuda.max_memory_allocated(engine.m.device) / 2**20
        return out

    @app.get("/v1/models", response_model=S.ModelList)
    async def models() -> S.ModelList:
        return S.ModelList(data=[engine.model_info()])

    @app.post("/v1/tokenize", response_model=S.TokenizeResponse)
    async def tokenize(req: S.TokenizeRequest) -> S.TokenizeResponse:
        return await off_loop(engine.tokenize_response, req)

    @app.post("/v1/activations", response_model=S.ActivationsResponse)
    async def activations(req: S.ActivationsRequest, request: Request) -> S.ActivationsResponse:
        return await _submit(request, "activations", req)

    @app.post("/v1/interchange", response_model=S.InterchangeResponse)
    async def interchange(req: S.InterchangeRequest, request: Request) -> S.InterchangeResponse:
        return await _submit(request, "interchange", req)

    @app.post("/v1/generate", response_model=S.GenerateResponse)
    async def generate(req: S.GenerateRequest, request: Request) -> S.GenerateResponse:
        return await _submit(request, "generate", req)

    @app.get("/v1/featurizers", response_model=S.FeaturizerList)
    async def list_featurizers() -> S.FeaturizerList:
        return S.FeaturizerList(data=[f.info() for f in engine.featurizers.list()])

    @app.post("/v1/featurizers", response_model=S.FeaturizerInfo)
    async def register(spec: S.FeaturizerSpec) -> S.FeaturizerInfo:
        return (await asyncio.to_thread(engine.featurizers.register, spec)).info()

    @app.get("/v1/saes", response_model=S.SAEList)
    async def saes() -> S.SAEList:
        return S.SAEList(data=await asyncio.to_thread(engine.saes.list))  # reads each cfg.json

    @app.delete("/v1/featurizers/{fid}")
    async def delete(fid: str) -> dict[str, str]:
        engine.featurizers.delete(fid)
        return {"deleted": fid}

    return app


def build_app(
    model: str,
    *,
    device: str = "auto",
    dtype: str = "auto",
    limits: Any = None,
    saes: dict[str, Path] | None = None,
    sae_dir: Path | None = None,
    circuits_dir: Path | None = None,
) -> FastAPI:
    """The service's app with `model` loaded, as `serve` runs it (also run in-process by
    benchmarks/device_check.py). `saes`: SAELens SAE folders by name; `sae_dir`: a folder of them
    (default: the project's built SAEs, when that folder exists). `circuits_dir`: the compiled
    transformers `harness circuits build` wrote (default: the cache's, when it exists); `model`
    "none" serves those only."""
    from interp_harness.model_services.intervention import model as model_mod

    if circuits_dir is not None and not circuits_dir.is_dir():
        raise NotADirectoryError(f"--circuits-dir {circuits_dir}: not a directory")
    folder = circuits_dir or default_circuits_dir()
    if model == NO_MODEL:
        # compiled models only: torch's threads are theirs (one is ~10x faster than two on a
        # busy 2-core machine, benchmarks/circuits.py)
        body_mib = getattr(limits, "max_body_mib", DEFAULT_MAX_BODY_MIB)
        return circuits_app(CircuitStore(folder, threads=1), body_mib)
    circuits = CircuitStore(folder) if folder.is_dir() else None

    if sae_dir is not None and not sae_dir.is_dir():
        raise SAEConfigError(f"--sae-dir {sae_dir}: not a directory")
    registry = SAERegistry(saes, sae_dir or default_sae_dir())  # a bad --sae fails before loading
    loaded = model_mod.load(model, device=device, dtype=dtype)
    registry.device = loaded.device  # SAEs are encoded where the model's activations are
    registry.warm()
    log.info("loaded %s (%s, %s)", model, loaded.device, loaded.dtype)
    return create_app(Engine(loaded, limits, saes=registry), circuits)


def serve(
    model: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8010,
    device: str = "auto",
    dtype: str = "auto",
    limits: Any = None,
    saes: dict[str, Path] | None = None,
    sae_dir: Path | None = None,
    circuits_dir: Path | None = None,
) -> None:
    """Load the model and serve it until interrupted (`build_app`'s options)."""
    import uvicorn

    app = build_app(
        model,
        device=device,
        dtype=dtype,
        limits=limits,
        saes=saes,
        sae_dir=sae_dir,
        circuits_dir=circuits_dir,
    )
    log.info("serving %s on http://%s:%d/v1", model, host, port)
    uvicorn.run(app, host=host, port=port, log_level="warning")
