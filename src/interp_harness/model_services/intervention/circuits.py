"""The intervention service's compiled transformers (the circuits family's tracr models): the
routes under `/v1/circuits` and the store of models they run.

The weights are found only in the operator's folder (`--circuits-dir`, by default
`$HARNESS_CACHE_DIR/data/circuits`, where `harness circuits build` writes them): one subfolder per
dataset, each with its `catalog.json` and the `.npz` files it names. A request names a target by
its id; the id must match `schemas.CIRCUIT_ID` and be listed in a catalog, and the file read is
the catalog's bare file name in that dataset's folder, so no request chooses a path. The truth
files beside the weights are never opened, and nothing of a catalog but ids and file names is
read (its `description` is the program's).

Experiments are `CircuitModel`'s own (`circuit_model.py`, the implementation the target service
and the scorer run in process). A model is loaded on first use and kept in a bounded LRU. Its
forward hooks are registered per call on the shared module, so one lock serialises the
experiments (each takes milliseconds); they run on a worker thread, off the event loop.

Routes: `GET /v1/circuits` (the served ids), `GET /v1/circuits/{id}` (a target's interface, what
its `task` command says), `POST /v1/circuits/{run,activations,ablate,patch,tokenize}` (the
target id in the body). A caller's bad input is a 400 with a message for it, an id not served a
404.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from interp_harness.model_services.backbone.guards import StrictJSONRoute, describe_errors
from interp_harness.model_services.backbone.model import cache_root
from interp_harness.model_services.body_limit import DEFAULT_MAX_BODY_MIB, BodyLimit
from interp_harness.model_services.intervention import schemas as S
from interp_harness.model_services.intervention.circuit_model import (
    CircuitInputError,
    CircuitModel,
    parse_word,
)

log = logging.getLogger(__name__)

CATALOG_FILE = "catalog.json"  # as function_store/circuits/build.py writes it
MAX_LOADED = 32  # models held at once (each a few hundred kilobytes)
_FILE = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]*\.npz$")  # a bare file name, no folder
_ID = re.compile(S.CIRCUIT_ID)
T = TypeVar("T")


class UnknownCircuit(LookupError):
    """No served target has this id (a 404); the message names the id only."""


def default_circuits_dir() -> Path:
    """`<cache>/circuits`, where `harness circuits build` writes (<cache> being HARNESS_CACHE_DIR/data,
    as function_store's cache_dir; model_services may not import function_store)."""
    return cache_root() / "data" / "circuits"


class CircuitStore:
    """The compiled models of one folder, loaded lazily, at most `max_loaded` at once."""

    def __init__(
        self, root: Path, max_loaded: int = MAX_LOADED, threads: int | None = None
    ) -> None:
        """`threads`: torch's intra-op threads, passed to each model (a process-wide setting:
        None beside a language model, 1 for a server of compiled models only)."""
        self.root = root
        self.max_loaded = max(1, max_loaded)
        self.threads = threads
        self._models: OrderedDict[str, CircuitModel] = OrderedDict()
        self._lock = threading.Lock()

    def catalog(self) -> dict[str, Path]:
        """Every served id -> its weights file, read from the catalogs (read anew each time: a
        build may add targets while the service runs). A catalog that cannot be read serves
        nothing; an entry whose id or file name is not plain is skipped."""
        out: dict[str, Path] = {}
        if not self.root.is_dir():
            return out
        for cat in sorted(self.root.glob(f"*/{CATALOG_FILE}")):
            try:
                rows = json.loads(cat.read_text(encoding="utf-8"))["targets"]
                pairs = [(str(r["id"]), str(r["weights"])) for r in rows]
            except (OSError, ValueError, KeyError, TypeError):
                log.warning("unreadable catalog in %s", cat.parent.name)
                continue
            for tid, name in pairs:
                if _ID.match(tid) and _FILE.match(name):
                    out[tid] = cat.parent / name
        return out

    def ids(self) -> list[str]:
        return sorted(self.catalog())

    def _load(self, target: str) -> CircuitModel:
        if target in self._models:
            self._models.move_to_end(target)
            return self._models[target]
        path = self.catalog().get(target) if _ID.match(target) else None
        if path is None or not path.is_file():
            raise UnknownCircuit(f"no compiled model {target!r} is served here")
        model = CircuitModel.from_npz(path, threads=self.threads)
        self._models[target] = model
        while len(self._models) > self.max_loaded:
            self._models.popitem(last=False)
        return model

    def run(self, target: str, fn: Callable[[CircuitModel], T]) -> T:
        """`fn(model)` under the store's lock (hooks are per call on the shared module)."""
        with self._lock:
            return fn(self._load(target))

    # ---- the experiments, as the routes answer them -------------------------------------------

    def info(self, target: str) -> S.CircuitTarget:
        def read(m: CircuitModel) -> S.CircuitTarget:
            return S.CircuitTarget(
                id=target,
                vocab=list(m.vocab),
                max_len=m.max_len,
                n_layers=m.n_layers,
                n_heads=m.n_heads,
                output_kind=m.output_kind,
                components=m.all_components(),
            )

        return self.run(target, read)

    def outputs(self, req: S.CircuitRunRequest) -> S.CircuitOutputs:
        results = self.run(req.target, lambda m: m.run(req.inputs))
        return S.CircuitOutputs(target=req.target, results=results)

    def ablate(self, req: S.CircuitAblateRequest) -> S.CircuitOutputs:
        def go(m: CircuitModel) -> list[list[Any]]:
            return m.ablate(req.inputs, req.components, req.kind, req.reference, req.seed)

        return S.CircuitOutputs(target=req.target, results=self.run(req.target, go))

    def patch(self, req: S.CircuitPatchRequest) -> S.CircuitOutputs:
        def go(m: CircuitModel) -> list[list[Any]]:
            if len(req.base) != len(req.source):
                raise CircuitInputError("give one source input per base input")
            return m.patch(req.base, req.source, req.components)

        return S.CircuitOutputs(target=req.target, results=self.run(req.target, go))

    def activations(self, req: S.CircuitActivationsRequest) -> S.CircuitActivationsResponse:
        acts = self.run(req.target, lambda m: m.activations(req.inputs, req.component))
        return S.CircuitActivationsResponse(
            target=req.target, component=req.component, results=_json_array(acts)
        )

    def tokenize(self, req: S.CircuitTokenizeRequest) -> S.CircuitTokenizeResponse:
        def go(m: CircuitModel) -> list[S.CircuitTokenized]:
            out = []
            for text in req.texts:
                tokens = parse_word(text, m.vocab, m.max_len)
                ids, _ = m.encode([tokens])
                out.append(S.CircuitTokenized(tokens=tokens, ids=ids[0, 1:].tolist()))
            return out

        return S.CircuitTokenizeResponse(target=req.target, results=self.run(req.target, go))


def _json_array(a: np.ndarray) -> Any:
    """Nested lists with None for NaN (past an input's end)."""
    if a.ndim == 0:
        v = float(a)
        return None if math.isnan(v) else v
    return [_json_array(x) for x in a]


def circuits_router(store: CircuitStore) -> APIRouter:
    """The `/v1/circuits` routes over `store`. Errors are raised as CircuitInputError (400) and
    UnknownCircuit (404); the app maps them."""
    router = APIRouter(route_class=StrictJSONRoute)  # NaN / lone surrogates: a 400

    async def off(fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.to_thread(fn, *args)

    @router.get("/v1/circuits", response_model=S.CircuitTargetList)
    async def listing() -> S.CircuitTargetList:
        return S.CircuitTargetList(data=await off(store.ids))

    @router.get("/v1/circuits/{target:path}", response_model=S.CircuitTarget)
    async def info(target: str) -> S.CircuitTarget:
        return await off(store.info, target)

    @router.post("/v1/circuits/run", response_model=S.CircuitOutputs)
    async def run(req: S.CircuitRunRequest) -> S.CircuitOutputs:
        return await off(store.outputs, req)

    @router.post("/v1/circuits/activations", response_model=S.CircuitActivationsResponse)
    async def activations(req: S.CircuitActivationsRequest) -> S.CircuitActivationsResponse:
        return await off(store.activations, req)

    @router.post("/v1/circuits/ablate", response_model=S.CircuitOutputs)
    async def ablate(req: S.CircuitAblateRequest) -> S.CircuitOutputs:
        return await off(store.ablate, req)

    @router.post("/v1/circuits/patch", response_model=S.CircuitOutputs)
    async def patch(req: S.CircuitPatchRequest) -> S.CircuitOutputs:
        return await off(store.patch, req)

    @router.post("/v1/circuits/tokenize", response_model=S.CircuitTokenizeResponse)
    async def tokenize(req: S.CircuitTokenizeRequest) -> S.CircuitTokenizeResponse:
        return await off(store.tokenize, req)

    return router


def add_circuits(app: FastAPI, store: CircuitStore) -> None:
    """Serve `store`'s compiled models on `app`: the routes and their two errors."""
    app.include_router(circuits_router(store))
    app.state.circuits = store

    @app.exception_handler(CircuitInputError)
    async def _bad(_: Request, exc: CircuitInputError) -> JSONResponse:
        return _error(400, str(exc), "invalid_request_error")

    @app.exception_handler(UnknownCircuit)
    async def _unknown(_: Request, exc: UnknownCircuit) -> JSONResponse:
        return _error(404, str(exc), "not_found")


def _error(status: int, message: str, kind: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind}}, status)


def circuits_app(store: CircuitStore, max_body_mib: int = DEFAULT_MAX_BODY_MIB) -> FastAPI:
    """A service of compiled models only (`harness intervention serve --model none`): no language
    model is loaded. `/health` and `/v1/models` (empty) answer as the full service's do."""
    app = FastAPI(title="interp-harness intervention service (compiled models)")
    app.router.route_class = StrictJSONRoute
    app.add_middleware(BodyLimit, max_bytes=max_body_mib * 2**20)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(400, describe_errors(exc.errors()), "invalid_request_error")

    @app.exception_handler(Exception)
    async def _internal(_: Request, exc: Exception) -> JSONResponse:
        log.exception("request failed")
        return _error(500, f"{type(exc).__name__}", "internal_error")

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"status": "ok", "model": None, "device": "cpu"}

    @app.get("/v1/models", response_model=S.ModelList)
    async def models() -> S.ModelList:
        return S.ModelList(data=[])

    add_circuits(app, store)
    return app
