"""The project's own OpenAI-compatible backbone server (FastAPI over `Engine`).

Routes: `GET /v1/models`, `GET /v1/models/{id}`, `POST /v1/chat/completions`,
`POST /v1/completions` (legacy, with `echo` and integer `logprobs`),
`POST /v1/batch/chat/completions` (our batch extension), `POST /tokenize`, `POST /detokenize`
and `GET /tokenizer_info` (vLLM's shapes, `tokenizer_routes`), `GET /health`. Both completion
routes stream Server-Sent Events with `stream: true`, piece by piece as the engine decodes
tokens. Every 4xx/5xx carries OpenAI's error object; parameters the
server does not serve (`tools`, `tool_choice`, `response_format` other than text) are refused with
a 400 that names them rather than ignored.

Concurrent requests are grouped: while the model is busy, incoming requests queue up and the next
forward pass takes all of them as one batch (so plain concurrent OpenAI clients are batched too).

Work is bounded before it reaches the model: a prompt whose tokens plus `max_tokens` exceed the
context (`max_model_len`, the model's own by default) is a 400 `context_length_exceeded`, decided
by the tokenizer alone, and before that by length: a text longer than the context times the
longest token (in characters) is refused untokenized; a request body over `max_body_mib` is a
413 before it is parsed; tokenizing runs on worker threads, so `/health` and other requests are
answered meanwhile. At most `max_queue` prompts wait or run (beyond: 503 with Retry-After; a
single request of more prompts than that can never be served: 400); a request whose client
disconnects is dropped from the queue, or from its batch at the next
decode step. Malformed JSON (NaN, lone surrogates) and invalid fields are 400s in OpenAI's error
shape.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from interp_harness.model_services.backbone.engine import (
    BadRequest,
    Engine,
    GenRequest,
    GenResult,
    TokenLogprob,
)
from interp_harness.model_services.backbone.guards import (
    ClientGone,
    cancel_on_disconnect,
    describe_errors,
    off_loop,
    worker_app,
)
from interp_harness.model_services.backbone.schemas import (
    BatchChatCompletion,
    BatchChatCompletionRequest,
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionRequest,
    ChatMessage,
    Choice,
    ChoiceLogprobs,
    ChunkChoice,
    Completion,
    CompletionChoice,
    CompletionRequest,
    DeltaMessage,
    LegacyLogprobs,
    ModelCard,
    ModelList,
    ResponseMessage,
    SamplingParams,
    TokenLogprobOut,
    TopLogprob,
    Usage,
)
from interp_harness.model_services.backbone.tokenizer_routes import add_tokenizer_routes
from interp_harness.model_services.body_limit import DEFAULT_MAX_BODY_MIB
from interp_harness.model_services.queue_worker import NeverFits, QueueFull, QueueWorker

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


class ApiError(Exception):
    """An error answered with OpenAI's error object and this status."""

    def __init__(
        self,
        status: int,
        message: str,
        kind: str,
        *,
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.kind, self.param, self.code = status, kind, param, code


def _printable(text: str) -> str:
    """`text` for an error message: a lone surrogate (from a hostile path) as an escape, since
    it cannot be encoded in the UTF-8 body; cut to 200 characters."""
    return text.encode("utf-8", "backslashreplace").decode()[:200]


def _refuse_unserved(p: SamplingParams) -> None:
    name = p.unserved()
    if name:
        raise BadRequest(
            f"`{name}` is not served by this server: it generates plain text only (no tool "
            "calls, no JSON mode or schema). Remove the parameter, or use a server that serves it.",
            param=name,
            code="unsupported_parameter",
        )


def _gen_request(
    messages: list[ChatMessage] | None,
    p: SamplingParams,
    engine: Engine,
    param: str = "messages",
    *,
    prompt_ids: list[int] | None = None,
    max_tokens: int | None = None,
) -> GenRequest:
    max_tokens = max_tokens or p.max_completion_tokens or p.max_tokens or DEFAULT_MAX_TOKENS
    # the tokenizer alone decides (milliseconds): an oversize prompt never reaches the model;
    # one that cannot fit whatever its tokens (megabytes) is not even tokenized. Called on a
    # tokenizing thread (off_loop).
    dumped = [m.model_dump() for m in messages or ()]
    if prompt_ids is None:
        engine.check_chars(sum(len(m["content"]) for m in dumped), param)
    ids = prompt_ids if prompt_ids is not None else engine.encode_prompt(dumped)
    engine.check_length(len(ids), max_tokens, param)
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
        for c in strings or ():
            engine.check_chars(len(c), name, f"{name} entries")
        if strings and any(not engine.tokenize(c) for c in strings):
            raise BadRequest(f"{name} entries must be non-empty strings")
    stop = [p.stop] if isinstance(p.stop, str) else p.stop
    return GenRequest(
        messages=dumped,
        prompt_ids=prompt_ids,
        max_tokens=max_tokens,
        logprobs=bool(p.logprobs),
        top_logprobs=p.top_logprobs or 0,
        logit_bias=bias,
        forced_choice=p.forced_choice,
        extra_logprobs=p.extra_logprobs,
        stop=stop or None,
        include_stop_str_in_output=p.include_stop_str_in_output,
    )


def _copies(gen: GenRequest, n: int) -> list[GenRequest]:
    """`n` choices of one prompt: n rows of the batch (greedy decoding makes them equal)."""
    return [gen] + [dataclasses.replace(gen, cancel=None) for _ in range(n - 1)]


def _chat_logprobs(res: GenResult, p: SamplingParams) -> ChoiceLogprobs | None:
    if not (p.logprobs or p.forced_choice):
        return None
    return ChoiceLogprobs(
        content=[
            TokenLogprobOut(
                token=t.token,
                logprob=t.logprob,
                bytes=list(t.token.encode()),
                top_logprobs=[
                    TopLogprob(token=s, logprob=lp, bytes=list(s.encode())) for _, s, lp in t.top
                ],
            )
            for t in res.tokens
        ]
    )


def _usage(results: list[GenResult], n: int) -> Usage:
    """Each prompt counted once (as OpenAI counts it for its `n` choices), every choice's
    tokens."""
    prompt = sum(r.prompt_tokens for r in results[::n])
    out = sum(r.completion_tokens for r in results)
    return Usage(prompt_tokens=prompt, completion_tokens=out, total_tokens=prompt + out)


def _completion(results: list[GenResult], p: SamplingParams, model: str) -> ChatCompletion:
    return ChatCompletion(
        id="chatcmpl-" + uuid.uuid4().hex[:24],
        created=int(time.time()),
        model=model,
        choices=[
            Choice(
                index=i,
                message=ResponseMessage(content=res.text),
                logprobs=_chat_logprobs(res, p),
                finish_reason=res.finish_reason,
            )
            for i, res in enumerate(results)
        ],
        usage=_usage(results, p.n),
    )


def _legacy_logprobs(
    tokens: list[TokenLogprob], offset: int, first: str | None = None
) -> LegacyLogprobs:
    """Legacy logprobs of `tokens`, text offsets counted from `offset`; `first` is the echoed
    prompt's first token, which has no logprob."""
    out = LegacyLogprobs()
    if first is not None:
        out.tokens.append(first)
        out.token_logprobs.append(None)
        out.top_logprobs.append(None)
        out.text_offset.append(offset)
        offset += len(first)
    for t in tokens:
        out.tokens.append(t.token)
        out.token_logprobs.append(t.logprob)
        out.top_logprobs.append({s: lp for _, s, lp in t.top})
        out.text_offset.append(offset)
        offset += len(t.token)
    return out


def _sse(obj: BaseModel | str) -> str:
    return f"data: {obj if isinstance(obj, str) else obj.model_dump_json()}\n\n"


async def _pieces(
    batcher: Batcher, gens: list[GenRequest]
) -> AsyncIterator[tuple[int, str] | list[GenResult]]:
    """(choice index, new text) as the engine decodes it, then the results. Leaving early (the
    client went away) cancels the work, which the batcher then drops."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[int, str] | None] = asyncio.Queue()
    for i, g in enumerate(gens):
        g.on_text = lambda text, i=i: loop.call_soon_threadsafe(queue.put_nowait, (i, text))
    task = asyncio.ensure_future(batcher.submit(gens))
    # settles after every piece: the engine thread queued them before its result
    task.add_done_callback(lambda _: queue.put_nowait(None))
    try:
        while (item := await queue.get()) is not None:
            yield item
        yield task.result()
    finally:
        task.cancel()


def _event_stream(
    batcher: Batcher,
    gens: list[GenRequest],
    head: list[BaseModel],
    piece: Callable[[int, str], BaseModel],
    tail: Callable[[list[GenResult]], list[BaseModel]],
) -> StreamingResponse:
    """Server-Sent Events: `head`, one event per decoded piece, `tail(results)`, `[DONE]`. An error
    after the first event is an event with OpenAI's error object (the SDK raises it)."""

    async def events() -> AsyncIterator[str]:
        for h in head:
            yield _sse(h)
        try:
            # closed at once when the client leaves (the engine then drops the work)
            async with contextlib.aclosing(_pieces(batcher, gens)) as pieces:
                async for item in pieces:
                    if isinstance(item, tuple):
                        yield _sse(piece(*item))
                    else:
                        for t in tail(item):
                            yield _sse(t)
        except Exception as e:  # the status line is sent: the error can only be an event
            log.warning("stream failed: %s", e)
            body = {"message": str(e), "type": "server_error", "param": None, "code": None}
            yield _sse(json.dumps({"error": body}))
            return
        yield _sse("[DONE]")

    return StreamingResponse(events(), media_type="text/event-stream")


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
    max_body_mib: int = DEFAULT_MAX_BODY_MIB,
) -> FastAPI:
    batcher = Batcher(engine, max_batch=max_batch, max_queue=max_queue)

    app = worker_app(
        "interp-harness backbone",
        batcher,
        max_body_mib=max_body_mib,
        engine=engine,
        served_name=served_name,
    )

    def check_model(name: str | None) -> None:
        if name and name != served_name:
            raise ApiError(
                404,
                f"The model `{_printable(name)}` does not exist; this server serves `{served_name}`.",
                "invalid_request_error",
                param="model",
                code="model_not_found",
            )

    @app.exception_handler(BadRequest)
    async def _bad(_, exc: BadRequest) -> JSONResponse:
        return _error(400, str(exc), "invalid_request_error", param=exc.param, code=exc.code)

    @app.exception_handler(ApiError)
    async def _api(_, exc: ApiError) -> JSONResponse:
        return _error(exc.status, str(exc), exc.kind, param=exc.param, code=exc.code)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # unknown routes and methods: OpenAI's wording and object, not FastAPI's {"detail"}
        message = (
            f"Invalid URL ({request.method} {_printable(request.url.path)})"
            if exc.status_code in (404, 405)
            else str(exc.detail)
        )
        return _error(exc.status_code, message, "invalid_request_error", headers=exc.headers)

    @app.exception_handler(Exception)
    async def _crash(_, exc: Exception) -> JSONResponse:
        log.exception("unhandled error")
        return _error(500, f"internal error: {type(exc).__name__}", "server_error")

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

    @app.exception_handler(NeverFits)
    async def _never(_, exc: NeverFits) -> JSONResponse:
        # not a 503: retrying the same request can never succeed
        return _error(400, str(exc), "invalid_request_error", code="request_too_large")

    @app.exception_handler(ClientGone)
    async def _gone(_, exc: ClientGone) -> JSONResponse:
        return _error(499, "client closed the request", "client_closed_request")

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/v1/models", response_model=ModelList)
    async def models() -> ModelList:
        return ModelList(data=[ModelCard(id=served_name)])

    @app.get("/v1/models/{model_id:path}", response_model=ModelCard)
    async def model_card(model_id: str) -> ModelCard:
        check_model(model_id)
        return ModelCard(id=served_name)

    @app.post(
        "/v1/chat/completions",
        response_model=ChatCompletion,
        response_model_exclude_none=True,
        responses={200: {"content": {"text/event-stream": {}}}},
    )
    async def chat(req: ChatCompletionRequest, request: Request) -> Any:
        check_model(req.model)
        _refuse_unserved(req)
        gens = await off_loop(lambda: _copies(_gen_request(req.messages, req, engine), req.n))
        if req.stream:
            batcher.admit(len(gens), "prompts")  # a full queue is a 503, not a broken stream
            return _chat_stream(gens, req)
        results = await cancel_on_disconnect(request, batcher.submit(gens))
        return _completion(results, req, served_name)

    def _chat_stream(gens: list[GenRequest], req: ChatCompletionRequest) -> StreamingResponse:
        cid, created = "chatcmpl-" + uuid.uuid4().hex[:24], int(time.time())

        def chunk(choices: list[ChunkChoice], usage: Usage | None = None) -> ChatCompletionChunk:
            return ChatCompletionChunk(
                id=cid, created=created, model=served_name, choices=choices, usage=usage
            )

        def tail(results: list[GenResult]) -> list[BaseModel]:
            out: list[BaseModel] = [
                chunk(
                    [
                        ChunkChoice(
                            index=i,
                            delta=DeltaMessage(),
                            logprobs=_chat_logprobs(r, req),  # all at once, at the end
                            finish_reason=r.finish_reason,
                        )
                    ]
                )
                for i, r in enumerate(results)
            ]
            if req.stream_options and req.stream_options.include_usage:
                out.append(chunk([], _usage(results, req.n)))
            return out

        head = [
            chunk([ChunkChoice(index=i, delta=DeltaMessage(role="assistant", content=""))])
            for i in range(len(gens))
        ]
        return _event_stream(
            batcher,
            gens,
            head,
            lambda i, text: chunk([ChunkChoice(index=i, delta=DeltaMessage(content=text))]),
            tail,
        )

    @app.post(
        "/v1/completions",
        response_model=Completion,
        response_model_exclude_none=True,
        responses={200: {"content": {"text/event-stream": {}}}},
    )
    async def completions(req: CompletionRequest, request: Request) -> Any:
        check_model(req.model)
        _refuse_unserved(req)
        if req.suffix:
            raise BadRequest("`suffix` (insertion) is not served", param="suffix")
        prompts = req.prompts()
        batcher.admit(len(prompts) * req.n, "prompts")  # before tokenizing a refused batch
        # max_tokens 0 (with echo: only the prompt's logprobs) decodes one token, then drops it
        max_tokens = req.max_tokens if req.max_tokens is not None else 16

        def build() -> tuple[list[str], list[GenRequest]]:  # on a tokenizing thread
            texts, gens = [], []
            for i, prompt in enumerate(prompts):
                param = "prompt" if len(prompts) == 1 else f"prompt[{i}]"
                if isinstance(prompt, str):
                    engine.check_chars(len(prompt), param, "prompt")
                ids = engine.tokenize(prompt) if isinstance(prompt, str) else list(prompt)
                if not ids:
                    raise BadRequest("the prompt is empty", param=param)
                if any(not 0 <= t < engine.vocab_size for t in ids):
                    raise BadRequest("prompt token ids outside the vocabulary", param=param)
                texts.append(prompt if isinstance(prompt, str) else engine.tok.decode(ids))
                gen = _gen_request(
                    None, req, engine, param, prompt_ids=ids, max_tokens=max(1, max_tokens)
                )
                # legacy `logprobs` is how many alternatives; 0 still lists the chosen tokens
                gen.logprobs, gen.top_logprobs = req.logprobs is not None, req.logprobs or 0
                if req.echo and req.logprobs is not None:
                    gen.prompt_logprobs = req.logprobs
                for g in _copies(gen, req.n):
                    if max_tokens == 0:
                        g.max_tokens, g.stop = 1, None
                    gens.append(g)
            return texts, gens

        texts, gens = await off_loop(build)
        first = {i: engine.token_text(g.prompt_ids[0]) for i, g in enumerate(gens)}  # type: ignore[index]

        def trimmed(r: GenResult) -> GenResult:
            if max_tokens == 0:
                return dataclasses.replace(r, text="", tokens=[], completion_tokens=0)
            return r

        def choice(i: int, r: GenResult) -> CompletionChoice:
            prompt_text = texts[i // req.n]
            logprobs = None
            if req.logprobs is not None:
                if req.echo:
                    logprobs = _legacy_logprobs((r.prompt or []) + r.tokens, 0, first[i])
                else:
                    logprobs = _legacy_logprobs(r.tokens, len(prompt_text))
            text = (prompt_text if req.echo else "") + r.text
            return CompletionChoice(
                index=i, text=text, logprobs=logprobs, finish_reason=r.finish_reason
            )

        cid, created = "cmpl-" + uuid.uuid4().hex[:24], int(time.time())

        def completion(choices: list[CompletionChoice], usage: Usage | None = None) -> Completion:
            return Completion(
                id=cid, created=created, model=served_name, choices=choices, usage=usage
            )

        if not req.stream:
            results = await cancel_on_disconnect(request, batcher.submit(gens))
            results = [trimmed(r) for r in results]
            return completion([choice(i, r) for i, r in enumerate(results)], _usage(results, req.n))
        if max_tokens == 0:
            for g in gens:
                g.on_text = None

        def tail(results: list[GenResult]) -> list[BaseModel]:
            results = [trimmed(r) for r in results]
            out: list[BaseModel] = []
            for i, r in enumerate(results):
                c = choice(i, r)
                c.text = ""  # the text went out piece by piece
                out.append(completion([c]))
            if req.stream_options and req.stream_options.include_usage:
                out.append(completion([], _usage(results, req.n)))
            return out

        head: list[BaseModel] = [
            completion([CompletionChoice(index=i, text=texts[i // req.n])])
            for i in range(len(gens))
            if req.echo
        ]
        return _event_stream(
            batcher,
            gens,
            head,
            lambda i, text: completion([CompletionChoice(index=i, text=text)]),
            tail,
        )

    @app.post(
        "/v1/batch/chat/completions",
        response_model=BatchChatCompletion,
        response_model_exclude_none=True,
    )
    async def chat_batch(req: BatchChatCompletionRequest, request: Request) -> BatchChatCompletion:
        check_model(req.model)
        _refuse_unserved(req)
        if req.stream:
            raise BadRequest("the batch route does not stream", param="stream")
        n = req.n
        batcher.admit(len(req.messages_list) * n, "prompts")  # before tokenizing a refused batch
        gens = await off_loop(
            lambda: [
                g
                for i, m in enumerate(req.messages_list)
                for g in _copies(_gen_request(m, req, engine, f"messages_list[{i}]"), n)
            ]
        )
        results = await cancel_on_disconnect(request, batcher.submit(gens))
        return BatchChatCompletion(
            model=served_name,
            completions=[
                _completion(results[i : i + n], req, served_name) for i in range(0, len(results), n)
            ],
        )

    add_tokenizer_routes(app, engine, check_model)
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
    max_body_mib: int = DEFAULT_MAX_BODY_MIB,
) -> None:
    """Load the model and serve it until interrupted."""
    import uvicorn

    from interp_harness.model_services.backbone import model as model_mod

    tok, lm = model_mod.load(model, cache_dir)
    name = served_name or (
        model_mod.DEFAULT_SERVED_NAME if model == model_mod.DEFAULT_MODEL else model
    )
    engine = Engine(tok, lm, max_batch=max_batch)
    if max_model_len is not None:  # the operator may only lower the model's own context
        engine.context_len = min(engine.context_len, max_model_len)
    app = create_app(
        engine, name, max_batch=max_batch, max_queue=max_queue, max_body_mib=max_body_mib
    )
    log.info("serving %s as %r on http://%s:%d/v1", model, name, host, port)
    uvicorn.run(app, host=host, port=port, log_level="warning")
