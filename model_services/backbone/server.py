"""The project's own OpenAI-compatible backbone server (FastAPI over `Engine`).

Routes: `GET /v1/models`, `POST /v1/chat/completions`, `POST /v1/batch/chat/completions` (our
batch extension), `POST /tokenize` (vLLM's shape), `GET /health`.

Concurrent requests are grouped: while the model is busy, incoming requests queue up and the next
forward pass takes all of them as one batch (so plain concurrent OpenAI clients are batched too).

Work is bounded before it reaches the model: a prompt whose tokens plus `max_tokens` exceed the
context (`max_model_len`, the model's own by default) is a 400 `context_length_exceeded`, decided
by the tokenizer alone; at most `max_queue` prompts wait or run (beyond: 503 with Retry-After);
a request whose client disconnects is dropped from the queue, or from its batch at the next
decode step. Malformed JSON (NaN, lone surrogates) and invalid fields are 400s in OpenAI's error
shape.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from model_services.backbone.engine import BadRequest, Engine, GenRequest, GenResult
from model_services.backbone.guards import (
    ClientGone,
    StrictJSONRoute,
    cancel_on_disconnect,
    describe_errors,
)
from model_services.backbone.schemas import (
    BatchChatCompletion,
    BatchChatCompletionRequest,
    ChatCompletion,
    ChatCompletionRequest,
    ChatMessage,
    Choice,
    ChoiceLogprobs,
    ModelCard,
    ModelList,
    ResponseMessage,
    SamplingParams,
    TokenizeRequest,
    TokenizeResponse,
    TokenLogprobOut,
    TopLogprob,
    Usage,
)
from model_services.queue_worker import QueueFull, QueueWorker

log = logging.getLogger(__name__)
DEFAULT_MAX_TOKENS = 256
DEFAULT_MAX_QUEUE = 4096  # prompts waiting or running (a FIND call sends up to 1000 words)


class Batcher(QueueWorker[list[GenRequest]]):
    """Groups queued requests into one `Engine.generate` call; adds no delay when idle."""

    def __init__(
        self, engine: Engine, max_batch: int = 64, max_queue: int | None = DEFAULT_MAX_QUEUE
    ) -> None:
        super().__init__(max_queue)
        self.engine = engine
        self.max_batch = max_batch

    async def submit(self, reqs: list[GenRequest]) -> list[GenResult]:
        return await self._enqueue(reqs, len(reqs), "prompts")

    async def _enqueue(self, item: list[GenRequest], size: int = 1, what: str = "items") -> Any:
        # The engine runs on a worker thread: it learns of a cancelled request through an Event.
        for r in item:
            r.cancel = r.cancel or threading.Event()
        try:
            return await super()._enqueue(item, size, what)
        except asyncio.CancelledError:
            for r in item:
                r.cancel.set()  # type: ignore[union-attr]
            raise

    async def _run(self) -> None:
        while True:
            items = self.live([await self._queue.get()])
            size = sum(len(i[0]) for i in items)
            while size < self.max_batch and not self._queue.empty():
                item = self._queue.get_nowait()
                if not item[1].done():  # a cancelled request is dropped unseen
                    items.append(item)
                    size += len(item[0])
            if items:
                await self._serve(items)

    async def _serve(self, items: list[tuple[list[GenRequest], asyncio.Future]]) -> None:
        flat = [r for reqs, _ in items for r in reqs]
        try:
            results = await asyncio.to_thread(self.engine.generate, flat)
        except Exception as e:  # one bad request must not fail its neighbours: retry alone
            if len(items) > 1:
                for item in self.live(items):
                    await self._serve([item])
                return
            if not items[0][1].done():
                items[0][1].set_exception(e)
            return
        i = 0
        for reqs, fut in items:
            if not fut.done():
                fut.set_result(results[i : i + len(reqs)])
            i += len(reqs)


def _gen_request(
    messages: list[ChatMessage], p: SamplingParams, engine: Engine, param: str = "messages"
) -> GenRequest:
    max_tokens = p.max_completion_tokens or p.max_tokens or DEFAULT_MAX_TOKENS
    # the tokenizer alone decides (milliseconds): an oversize prompt never reaches the model
    dumped = [m.model_dump() for m in messages]
    engine.check_length(len(engine.encode_prompt(dumped)), max_tokens, param)
    bias = None
    if p.logit_bias:
        try:
            bias = {int(k): float(v) for k, v in p.logit_bias.items()}
        except ValueError as e:
            raise BadRequest("logit_bias keys must be token ids") from e
        bad = [k for k in bias if not 0 <= k < engine.vocab_size]
        if bad:
            raise BadRequest(f"logit_bias token ids outside the vocabulary: {bad[:5]}")
    for name, strings in (("forced_choice", p.forced_choice), ("extra_logprobs", p.extra_logprobs)):
        if strings and any(not engine.tokenize(c) for c in strings):
            raise BadRequest(f"{name} entries must be non-empty strings")
    stop = [p.stop] if isinstance(p.stop, str) else p.stop
    return GenRequest(
        messages=dumped,
        max_tokens=max_tokens,
        logprobs=p.logprobs,
        top_logprobs=p.top_logprobs or 0,
        logit_bias=bias,
        forced_choice=p.forced_choice,
        extra_logprobs=p.extra_logprobs,
        stop=stop or None,
        include_stop_str_in_output=p.include_stop_str_in_output,
    )


def _completion(res: GenResult, p: SamplingParams, model: str) -> ChatCompletion:
    logprobs = None
    if p.logprobs or p.forced_choice:
        logprobs = ChoiceLogprobs(
            content=[
                TokenLogprobOut(
                    token=t.token,
                    logprob=t.logprob,
                    bytes=list(t.token.encode()),
                    top_logprobs=[
                        TopLogprob(token=s, logprob=lp, bytes=list(s.encode()))
                        for _, s, lp in t.top
                    ],
                )
                for t in res.tokens
            ]
        )
    n_out = len(res.tokens) if res.tokens else 0
    return ChatCompletion(
        id="chatcmpl-" + uuid.uuid4().hex[:24],
        created=int(time.time()),
        model=model,
        choices=[
            Choice(
                message=ResponseMessage(content=res.text),
                logprobs=logprobs,
                finish_reason=res.finish_reason,
            )
        ],
        usage=Usage(
            prompt_tokens=res.prompt_tokens,
            completion_tokens=n_out,
            total_tokens=res.prompt_tokens + n_out,
        ),
    )


def _error(
    status: int,
    message: str,
    kind: str,
    *,
    param: str | None = None,
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    """OpenAI's error object."""
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return JSONResponse(body, status, headers=headers)


def create_app(
    engine: Engine,
    served_name: str,
    *,
    max_batch: int = 64,
    max_queue: int | None = DEFAULT_MAX_QUEUE,
) -> FastAPI:
    batcher = Batcher(engine, max_batch=max_batch, max_queue=max_queue)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        batcher.start()
        yield
        await batcher.stop()

    app = FastAPI(title="interp-harness backbone", lifespan=lifespan)
    app.router.route_class = StrictJSONRoute  # NaN / lone surrogates: a 400, on every route
    app.state.engine = engine
    app.state.served_name = served_name
    app.state.batcher = batcher

    def check_model(name: str | None) -> None:
        if name and name != served_name:
            raise HTTPException(
                404, f"The model `{name}` does not exist; this server serves `{served_name}`."
            )

    @app.exception_handler(BadRequest)
    async def _bad(_, exc: BadRequest) -> JSONResponse:
        return _error(400, str(exc), "invalid_request_error", param=exc.param, code=exc.code)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {}
        loc = [str(x) for x in first.get("loc", ()) if x != "body"]
        param = ".".join(loc) if first.get("type") != "json_invalid" and loc else None
        return _error(400, describe_errors(errors), "invalid_request_error", param=param)

    @app.exception_handler(QueueFull)
    async def _full(_, exc: QueueFull) -> JSONResponse:
        headers = {"Retry-After": str(exc.retry_after_s)}
        return _error(503, str(exc), "server_overloaded", headers=headers)

    @app.exception_handler(ClientGone)
    async def _gone(_, exc: ClientGone) -> JSONResponse:
        return _error(499, "client closed the request", "client_closed_request")

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/v1/models", response_model=ModelList)
    async def models() -> ModelList:
        return ModelList(data=[ModelCard(id=served_name)])

    @app.post(
        "/v1/chat/completions", response_model=ChatCompletion, response_model_exclude_none=True
    )
    async def chat(req: ChatCompletionRequest, request: Request) -> ChatCompletion:
        check_model(req.model)
        gen = _gen_request(req.messages, req, engine)
        (res,) = await cancel_on_disconnect(request, batcher.submit([gen]))
        return _completion(res, req, served_name)

    @app.post(
        "/v1/batch/chat/completions",
        response_model=BatchChatCompletion,
        response_model_exclude_none=True,
    )
    async def chat_batch(req: BatchChatCompletionRequest, request: Request) -> BatchChatCompletion:
        check_model(req.model)
        batcher.admit(len(req.messages_list), "prompts")  # before tokenizing a refused batch
        gens = [
            _gen_request(m, req, engine, f"messages_list[{i}]")
            for i, m in enumerate(req.messages_list)
        ]
        results = await cancel_on_disconnect(request, batcher.submit(gens))
        return BatchChatCompletion(
            model=served_name, completions=[_completion(r, req, served_name) for r in results]
        )

    @app.post("/tokenize", response_model=TokenizeResponse)
    async def tokenize(req: TokenizeRequest) -> TokenizeResponse:
        check_model(req.model)
        ids = engine.tokenize(req.prompt)
        return TokenizeResponse(tokens=ids, count=len(ids), max_model_len=engine.context_len)

    return app


def serve(
    model: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    served_name: str | None = None,
    cache_dir: Path | None = None,
    max_batch: int = 64,
    max_model_len: int | None = None,
    max_queue: int = DEFAULT_MAX_QUEUE,
) -> None:
    """Load the model and serve it until interrupted."""
    import uvicorn

    from model_services.backbone import model as model_mod

    tok, lm = model_mod.load(model, cache_dir)
    name = served_name or (
        model_mod.DEFAULT_SERVED_NAME if model == model_mod.DEFAULT_MODEL else model
    )
    engine = Engine(tok, lm, max_batch=max_batch)
    if max_model_len is not None:  # the operator may only lower the model's own context
        engine.context_len = min(engine.context_len, max_model_len)
    app = create_app(engine, name, max_batch=max_batch, max_queue=max_queue)
    log.info("serving %s as %r on http://%s:%d/v1", model, name, host, port)
    uvicorn.run(app, host=host, port=port, log_level="warning")
