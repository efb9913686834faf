"""What both model servers (backbone, intervention) put in front of their engines.

- `StrictJSONRoute`: request bodies are parsed as strict JSON: `NaN`/`Infinity` (and numbers that
  overflow to infinity) and lone surrogates (`"\\ud800"`, which no tokenizer can encode) are a
  JSON error, i.e. a 4xx from the app's validation handler, before any handler or model sees them.
- `cancel_on_disconnect`: runs a handler's work while watching the connection; when the client
  goes away the work is cancelled (the batchers then drop it) instead of computed for nobody.
- `BodyLimit` (interp_harness.model_services.body_limit): a body over the operator's `--max-body-mib` is a 413
  before it is parsed.
- `off_loop`: tokenizing runs on worker threads, never on the event loop (a long text held
  `/health` and every other request for as long as it took).
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import re
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.routing import APIRoute

from interp_harness.model_services.body_limit import DEFAULT_MAX_BODY_MIB, BodyLimit

T = TypeVar("T")
# Two threads: the model's own thread keeps the cores busy; tokenizing is bounded by the text
# limits, so a request waits at most a few of them.
_TOKENIZE = ThreadPoolExecutor(max_workers=2, thread_name_prefix="tokenize")
_SURROGATE = re.compile("[\ud800-\udfff]")


class ClientGone(Exception):
    """The client disconnected before its answer was ready; nobody reads the response."""


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    v = float(text)
    if not math.isfinite(v):
        raise ValueError(f"number {text[:30]} is out of range")
    return v


def _check_strings(value: Any, path: str = "") -> None:
    if isinstance(value, str):
        if _SURROGATE.search(value):
            raise ValueError(f"{path or 'body'}: string holds a lone UTF-16 surrogate")
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_strings(k, path)
            _check_strings(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_strings(v, f"{path}[{i}]")


def strict_loads(body: bytes | str) -> Any:
    """json.loads, refusing non-finite numbers and lone surrogates (raises JSONDecodeError, which
    FastAPI turns into a validation error, never a 500)."""
    doc = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    try:
        value = json.loads(doc, parse_constant=_reject_constant, parse_float=_finite_float)
        _check_strings(value)
    except json.JSONDecodeError:
        raise
    except (ValueError, RecursionError) as e:  # also ints past Python's digit limit
        raise json.JSONDecodeError(str(e)[:200], doc[:200], 0) from None
    return value


class _StrictJSONRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            # parsing up to --max-body-mib takes a moment: off the event loop too
            self._json = await off_loop(strict_loads, await self.body())
        return self._json


class StrictJSONRoute(APIRoute):
    """Set as `app.router.route_class` before the routes are declared: every route gets it."""

    def get_route_handler(self) -> Callable[[Request], Awaitable[Any]]:
        handler = super().get_route_handler()

        async def strict(request: Request) -> Any:
            return await handler(_StrictJSONRequest(request.scope, request.receive))

        return strict


def describe_errors(errors: Sequence[Any]) -> str:
    """A validation error's message: where and what, never the input itself (it may be what
    cannot be encoded)."""
    out = []
    for e in list(errors)[:5]:
        if e.get("type") == "json_invalid":
            out.append(f"invalid JSON: {(e.get('ctx') or {}).get('error', 'cannot be parsed')}")
            continue
        where = ".".join(str(x) for x in e.get("loc", ()) if x != "body")
        out.append(f"{where}: {e.get('msg')}" if where else str(e.get("msg")))
    return "; ".join(out) or "invalid request"


async def _disconnected(request: Request) -> None:
    # The body is already read: the next ASGI message is the disconnect (uvicorn sends it when
    # the peer closes; vLLM's `with_cancellation` watches the same way).
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


async def cancel_on_disconnect(request: Request, work: Awaitable[T]) -> T:
    """`work`'s result, or `ClientGone` (with `work` cancelled) if the client leaves first."""
    task = asyncio.ensure_future(work)
    watch = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({task, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
        if not task.done():
            task.cancel()
    if not task.done():
        # cancel() only asks: the work ends at its next await. Its result cannot be read before
        # then (InvalidStateError, which every dropped client used to log as a traceback), and
        # nobody wants it: wait for the cancellation to land, then say the client left.
        await asyncio.wait({task})
        if not task.cancelled():
            task.exception()  # read, so asyncio logs nothing for what it raised meanwhile
        raise ClientGone()
    if task.cancelled():
        raise ClientGone()
    return task.result()


async def off_loop(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` on a tokenizing thread: the event loop goes on answering meanwhile."""
    return await asyncio.get_running_loop().run_in_executor(_TOKENIZE, functools.partial(fn, *args))


def worker_app(
    title: str, worker: Any, *, max_body_mib: int = DEFAULT_MAX_BODY_MIB, **state: Any
) -> FastAPI:
    """A model server's app: its queue worker (a `QueueWorker`) starts and stops with it, request
    bodies are at most `max_body_mib` MiB (413 past it) and strict JSON on every route, and
    `state` (with `batcher`) is on `app.state`."""
    import contextlib
    from collections.abc import AsyncIterator

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        worker.start()
        yield
        await worker.stop()

    app = FastAPI(title=title, lifespan=lifespan)
    app.router.route_class = StrictJSONRoute  # NaN / lone surrogates: a 400, on every route
    app.add_middleware(BodyLimit, max_bytes=max_body_mib * 2**20)
    for name, value in {**state, "batcher": worker}.items():
        setattr(app.state, name, value)
    return app
