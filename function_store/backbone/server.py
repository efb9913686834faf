"""The project's own OpenAI-compatible backbone server (FastAPI over `Engine`).

Routes: `GET /v1/models`, `POST /v1/chat/completions`, `POST /v1/batch/chat/completions` (our
batch extension), `POST /tokenize` (vLLM's shape), `GET /health`.

Concurrent requests are grouped: while the model is busy, incoming requests queue up and the next
forward pass takes all of them as one batch (so plain concurrent OpenAI clients are batched too).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

from fastapi import FastAPI, HTTPException
from fastapi.responses import JSONResponse

from function_store.backbone.engine import BadRequest, Engine, GenRequest, GenResult
from function_store.backbone.schemas import (
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
from function_store.queue_worker import QueueWorker

log = logging.getLogger(__name__)
DEFAULT_MAX_TOKENS = 256


class Batcher(QueueWorker[list[GenRequest]]):
    """Groups queued requests into one `Engine.generate` call; adds no delay when idle."""

    def __init__(self, engine: Engine, max_batch: int = 64) -> None:
        super().__init__()
        self.engine = engine
        self.max_batch = max_batch

    async def submit(self, reqs: list[GenRequest]) -> list[GenResult]:
        return await self._enqueue(reqs)

    async def _run(self) -> None:
        while True:
            items = [await self._queue.get()]
            size = len(items[0][0])
            while size < self.max_batch and not self._queue.empty():
                item = self._queue.get_nowait()
                items.append(item)
                size += len(item[0])
            await self._serve(items)

    async def _serve(self, items: list[tuple[list[GenRequest], asyncio.Future]]) -> None:
        flat = [r for reqs, _ in items for r in reqs]
        try:
            results = await asyncio.to_thread(self.engine.generate, flat)
        except Exception as e:  # one bad request must not fail its neighbours: retry alone
            if len(items) > 1:
                for item in items:
                    await self._serve([item])
                return
            items[0][1].set_exception(e)
            return
        i = 0
        for reqs, fut in items:
            if not fut.cancelled():
                fut.set_result(results[i : i + len(reqs)])
            i += len(reqs)


def _gen_request(messages: list[ChatMessage], p: SamplingParams, engine: Engine) -> GenRequest:
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
        messages=[m.model_dump() for m in messages],
        max_tokens=p.max_completion_tokens or p.max_tokens or DEFAULT_MAX_TOKENS,
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


def create_app(engine: Engine, served_name: str, *, max_batch: int = 64) -> FastAPI:
    batcher = Batcher(engine, max_batch=max_batch)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        batcher.start()
        yield
        await batcher.stop()

    app = FastAPI(title="interp-harness backbone", lifespan=lifespan)
    app.state.engine = engine
    app.state.served_name = served_name

    def check_model(name: str | None) -> None:
        if name and name != served_name:
            raise HTTPException(
                404, f"The model `{name}` does not exist; this server serves `{served_name}`."
            )

    @app.exception_handler(BadRequest)
    async def _bad(_, exc: BadRequest) -> JSONResponse:
        return JSONResponse({"error": {"message": str(exc), "type": "invalid_request_error"}}, 400)

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/v1/models", response_model=ModelList)
    async def models() -> ModelList:
        return ModelList(data=[ModelCard(id=served_name)])

    @app.post(
        "/v1/chat/completions", response_model=ChatCompletion, response_model_exclude_none=True
    )
    async def chat(req: ChatCompletionRequest) -> ChatCompletion:
        check_model(req.model)
        (res,) = await batcher.submit([_gen_request(req.messages, req, engine)])
        return _completion(res, req, served_name)

    @app.post(
        "/v1/batch/chat/completions",
        response_model=BatchChatCompletion,
        response_model_exclude_none=True,
    )
    async def chat_batch(req: BatchChatCompletionRequest) -> BatchChatCompletion:
        check_model(req.model)
        gens = [_gen_request(m, req, engine) for m in req.messages_list]
        results = await batcher.submit(gens)
        return BatchChatCompletion(
            model=served_name, completions=[_completion(r, req, served_name) for r in results]
        )

    @app.post("/tokenize", response_model=TokenizeResponse)
    async def tokenize(req: TokenizeRequest) -> TokenizeResponse:
        check_model(req.model)
        ids = engine.tokenize(req.prompt)
        return TokenizeResponse(tokens=ids, count=len(ids))

    return app


def serve(
    model: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    served_name: str | None = None,
    cache_dir: Path | None = None,
    max_batch: int = 64,
) -> None:
    """Load the model and serve it until interrupted."""
    import uvicorn

    from function_store.backbone import model as model_mod

    tok, lm = model_mod.load(model, cache_dir)
    name = served_name or (
        model_mod.DEFAULT_SERVED_NAME if model == model_mod.DEFAULT_MODEL else model
    )
    app = create_app(Engine(tok, lm, max_batch=max_batch), name, max_batch=max_batch)
    log.info("serving %s as %r on http://%s:%d/v1", model, name, host, port)
    uvicorn.run(app, host=host, port=port, log_level="warning")
