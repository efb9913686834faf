"""The backbone server's tokenizer routes, in vLLM's shapes: `POST /tokenize`,
`POST /detokenize`, `GET /tokenizer_info`.

lm-evaluation-harness's `local-completions` model uses a server's own tokenizer (its `remote`
backend, chosen by itself when `/tokenizer_info` and `/tokenize` answer): log-likelihood tasks
count the context's tokens with `/tokenize`, read the end-of-text token from `/tokenizer_info`,
and turn token ids back into text with `/detokenize`. Without these routes its log-likelihood
tasks needed the path of the converted model's tokenizer in our cache.
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI

from interp_harness.model_services.backbone.engine import BadRequest, Engine
from interp_harness.model_services.backbone.guards import off_loop
from interp_harness.model_services.backbone.schemas import (
    DetokenizeRequest,
    DetokenizeResponse,
    TokenizeRequest,
    TokenizeResponse,
    TokenizerInfo,
)


def _text(token: object) -> str | None:
    # transformers keeps some special tokens as `AddedToken` objects; the wire carries their text
    return None if token is None else str(token)


def tokenizer_info(engine: Engine) -> TokenizerInfo:
    tok = engine.tok
    template = getattr(tok, "chat_template", None)
    return TokenizerInfo(
        tokenizer_class=type(tok).__name__,
        bos_token=_text(tok.bos_token),
        eos_token=_text(tok.eos_token),
        pad_token=_text(tok.pad_token),
        unk_token=_text(tok.unk_token),
        chat_template=template if isinstance(template, str) else None,
        # what a request may use, not the tokenizer's placeholder (1e30 for SmolLM2)
        model_max_length=engine.context_len,
    )


def add_tokenizer_routes(
    app: FastAPI, engine: Engine, check_model: Callable[[str | None], None]
) -> None:
    """The three routes on `app`; `check_model` refuses a model name the server does not serve."""
    info = tokenizer_info(engine)

    @app.post("/tokenize", response_model=TokenizeResponse)
    async def tokenize(req: TokenizeRequest) -> TokenizeResponse:
        check_model(req.model)
        engine.check_chars(len(req.prompt), "prompt", "prompt")  # the same bound as a prompt's
        ids = await off_loop(engine.tokenize, req.prompt)
        return TokenizeResponse(tokens=ids, count=len(ids), max_model_len=engine.context_len)

    @app.post("/detokenize", response_model=DetokenizeResponse)
    async def detokenize(req: DetokenizeRequest) -> DetokenizeResponse:
        check_model(req.model)
        # no caller needs more than one context's worth; the body limit alone allows millions
        if len(req.tokens) > engine.context_len:
            raise BadRequest(
                f"at most {engine.context_len} tokens (the model's context) can be detokenized "
                f"at once; got {len(req.tokens)}",
                param="tokens",
                code="context_length_exceeded",
            )
        if any(not 0 <= t < engine.vocab_size for t in req.tokens):
            raise BadRequest("token ids outside the vocabulary", param="tokens")
        # special tokens kept: lm-evaluation-harness decodes prompts it then sends back as text
        text = await off_loop(engine.tok.decode, req.tokens)
        return DetokenizeResponse(prompt=text)

    @app.get("/tokenizer_info", response_model=TokenizerInfo)
    async def get_tokenizer_info() -> TokenizerInfo:
        return info
