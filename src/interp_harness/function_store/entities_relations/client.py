"""Client of an OpenAI-compatible backbone (our `harness backbone serve`, or vLLM).

Failures (connection refused, timeouts, 5xx, malformed replies) are retried a bounded number of
times and then raised as `BackboneError` (category `infrastructure`); nothing waits forever: every
request has a connect and a read timeout.

Batching: many prompts go to the server at once, either as one request to our batch extension
(`POST /v1/batch/chat/completions`) or, for servers without it (vLLM), as concurrent plain requests
(vLLM batches those itself and caches the shared prefix). `batch="auto"` tries the extension once
and remembers a 404/405.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import httpx
from pydantic import BaseModel, Field, ValidationError

from interp_harness.function_store.entities_relations.scoring import DIGITS, find_digit_site
from interp_harness.model_services.backbone.schemas import BatchChatCompletion, ChatCompletion
from interp_harness.model_services.http_retry import NotFound as _NotFound
from interp_harness.model_services.http_retry import RetryPolicy, ServiceSettings, request_json

log = logging.getLogger(__name__)

Messages = list[dict[str, str]]


class BackboneError(RuntimeError):
    """The backbone could not answer: an infrastructure error, never a score."""

    category = "infrastructure"


class InputTooLong(BackboneError):
    """The backbone refused a prompt as longer than its context (OpenAI's and vLLM's 400): the
    input's fault, which the agent can correct, not the backbone's."""

    category = "agent"


def _too_long(e: BackboneError) -> bool:
    body = getattr(e, "body", "") or ""
    return getattr(e, "status", None) == 400 and (
        "context_length_exceeded" in body or "maximum context length" in body
    )


class BackboneSettings(ServiceSettings):
    URL_ENV = "HARNESS_BACKBONE_URL"
    ENV = {
        "model": "HARNESS_BACKBONE_MODEL",
        "api_key": "HARNESS_BACKBONE_API_KEY",
        "timeout_s": "HARNESS_BACKBONE_TIMEOUT",
        "retries": "HARNESS_BACKBONE_RETRIES",
        "forced_choice": "HARNESS_BACKBONE_FORCED_CHOICE",
        "batch": "HARNESS_BACKBONE_BATCH",
        "relation_max_tokens": "HARNESS_BACKBONE_RELATION_MAX_TOKENS",
        "max_input_chars": "HARNESS_BACKBONE_MAX_INPUT_CHARS",
    }

    url: str  # base URL of the OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1
    model: str | None = None  # None: the first id of GET /v1/models
    api_key: str | None = None
    forced_choice: Literal["extension", "logit_bias"] = "extension"
    # auto: our batch route when the server has it, else concurrent requests; sequential: one
    # request per prompt in order, as FIND does (for comparisons)
    batch: Literal["auto", "endpoint", "concurrent", "sequential"] = "auto"
    max_concurrency: int = Field(16, ge=1)
    entity_max_tokens: int = Field(8, ge=1)  # replies are read up to the first 0/1 token
    relation_max_tokens: int = Field(48, ge=1)
    top_logprobs: int = Field(20, ge=2, le=20)
    # longest input (word) a neural target sends to the backbone: FIND's inputs are words, and a
    # long one costs the shared CPU backbone seconds to minutes (prompt length)
    max_input_chars: int = Field(500, ge=1)


class BackboneClient:
    def __init__(self, settings: BackboneSettings | str) -> None:
        self.settings = BackboneSettings(url=settings) if isinstance(settings, str) else settings
        s = self.settings
        headers = {"Authorization": f"Bearer {s.api_key}"} if s.api_key else {}
        self._http = httpx.Client(
            timeout=httpx.Timeout(s.timeout_s, connect=s.connect_timeout_s),
            headers=headers,
            limits=httpx.Limits(max_connections=s.max_concurrency + 2),
        )
        self._model = s.model
        self._batch_endpoint: bool | None = {
            "auto": None,
            "endpoint": True,
            "concurrent": False,
            "sequential": False,
        }[s.batch]
        self._digit_ids: dict[str, int] | None = None
        self._lock = threading.Lock()

    def close(self) -> None:
        self._http.close()

    # --- HTTP with retries --------------------------------------------------------------------
    def _request(self, method: str, url: str, body: Any = None) -> Any:
        s = self.settings
        policy = RetryPolicy(
            timeout_s=s.timeout_s,
            connect_timeout_s=s.connect_timeout_s,
            retries=s.retries,
            backoff_s=s.backoff_s,
            retry_timeouts=s.retry_timeouts,
        )
        return request_json(
            self._http,
            method,
            url,
            body,
            policy,
            service=f"backbone at {s.api_base}",
            error=BackboneError,
        )

    def _post_validated(self, path: str, body: dict, model: type[BaseModel]) -> Any:
        s = self.settings
        last = ""
        for _ in range(s.retries + 1):  # malformed-but-200 replies are retried too
            try:
                data = self._request("POST", s.api_base + path, body)
            except BackboneError as e:
                if _too_long(e):
                    raise InputTooLong(str(e)) from e
                raise
            try:
                reply = model.model_validate(data)
            except ValidationError as e:
                last = str(e).splitlines()[0] if str(e) else "invalid"
                continue
            last = _unusable(reply) or ""
            if not last:
                return reply
        raise BackboneError(f"backbone at {s.api_base} returned malformed replies: {last}")

    # --- API ---------------------------------------------------------------------------------
    def model(self) -> str:
        if self._model is None:
            try:
                data = self._request("GET", self.settings.api_base + "/models")
            except _NotFound as e:
                raise BackboneError(
                    f"backbone at {self.settings.api_base} has no /models route"
                ) from e
            try:
                self._model = str(data["data"][0]["id"])
            except (KeyError, IndexError, TypeError) as e:
                raise BackboneError(
                    f"backbone at {self.settings.api_base} listed no model: {str(data)[:200]}"
                ) from e
        return self._model

    def chat_many(self, messages_list: list[Messages], **params: Any) -> list[ChatCompletion]:
        """One completion per message list, in order, as one batch where the server allows."""
        if not messages_list:
            return []
        body = {"model": self.model(), "temperature": 0.0, **params}
        if self._batch_endpoint is not False and len(messages_list) > 1:
            try:
                out = self._post_validated(
                    "/batch/chat/completions",
                    {**body, "messages_list": messages_list},
                    BatchChatCompletion,
                )
                self._batch_endpoint = True
                if len(out.completions) != len(messages_list):
                    raise BackboneError("backbone batch reply has the wrong number of completions")
                return out.completions
            except _NotFound:
                if self._batch_endpoint:
                    raise BackboneError(
                        "backbone has no batch endpoint (set batch=concurrent)"
                    ) from None
                self._batch_endpoint = False
        return self._concurrent([{**body, "messages": m} for m in messages_list])

    def _one(self, body: dict) -> ChatCompletion:
        try:
            c = self._post_validated("/chat/completions", body, ChatCompletion)
        except _NotFound as e:
            raise BackboneError(
                f"backbone at {self.settings.api_base} answered HTTP {e.status} to /chat/completions: {e.body}"
            ) from e
        return c

    def _concurrent(self, bodies: list[dict]) -> list[ChatCompletion]:
        if len(bodies) == 1 or self.settings.batch == "sequential":
            return [self._one(b) for b in bodies]
        with ThreadPoolExecutor(min(len(bodies), self.settings.max_concurrency)) as pool:
            return list(pool.map(self._one, bodies))

    # --- FIND's modules ------------------------------------------------------------------------
    def relation_replies(self, messages_list: list[Messages]) -> list[str]:
        comps = self.chat_many(messages_list, max_tokens=self.settings.relation_max_tokens)
        out = []
        for c in comps:
            text = c.choices[0].message.content
            if text is None:
                raise BackboneError("backbone reply has no message content")
            out.append(text)
        return out

    def entity_scores(self, messages_list: list[Messages]) -> list[float]:
        """P("1")/(P("0")+P("1")) at the first 0/1 token of each greedy reply."""
        params: dict[str, Any] = {
            "max_tokens": self.settings.entity_max_tokens,
            "logprobs": True,
            "top_logprobs": self.settings.top_logprobs,
            "stop": list(DIGITS),  # nothing after the first digit is needed
            "include_stop_str_in_output": True,
        }
        if self.settings.forced_choice == "extension":
            # Our server then lists both digits at every position, so the score is read from
            # this reply even when a digit is ranked low or the reply has none (position 0).
            params["extra_logprobs"] = list(DIGITS)
        comps = self.chat_many(messages_list, **params)
        scores: list[float | None] = []
        todo: list[int] = []
        prefixes: list[str] = []
        for i, c in enumerate(comps):
            site = find_digit_site(_logprob_items(c))
            scores.append(site.score)
            if site.score is None:
                todo.append(i)
                prefixes.append(site.prefix)
        if todo:
            forced = self._forced_choice([messages_list[i] for i in todo], prefixes)
            for i, p in zip(todo, forced, strict=True):
                scores[i] = p
        return [float(s) for s in scores]  # type: ignore[arg-type]

    def _forced_choice(self, messages_list: list[Messages], prefixes: list[str]) -> list[float]:
        """Re-ask at the first digit's position (the reply so far is continued as an assistant
        message), with the first token restricted to "0"/"1", and read both digits' logprobs."""
        convs = [
            m + [{"role": "assistant", "content": p}] if p else m
            for m, p in zip(messages_list, prefixes, strict=True)
        ]
        cont = {"continue_final_message": True, "add_generation_prompt": False}
        params: dict[str, Any] = {
            "max_tokens": 1,
            "logprobs": True,
            "top_logprobs": self.settings.top_logprobs,
        }
        if self.settings.forced_choice == "extension":
            params["forced_choice"] = list(DIGITS)
        else:
            ids = self._digit_token_ids()
            params["logit_bias"] = {str(ids[d]): 100 for d in DIGITS}
        out = []
        # continued and fresh conversations take different template flags: send them apart
        for group in (True, False):
            idx = [i for i, p in enumerate(prefixes) if bool(p) == group]
            if not idx:
                continue
            extra = cont if group else {}
            comps = self.chat_many([convs[i] for i in idx], **params, **extra)
            for i, c in zip(idx, comps, strict=True):
                score = find_digit_site(_logprob_items(c)).score  # one token: the digit
                if score is None:
                    raise BackboneError(
                        "backbone gave no logprobs for both '0' and '1' even in a forced-choice "
                        "request (vLLM needs --logprobs-mode processed_logprobs for logit_bias mode)"
                    )
                out.append((i, score))
        return [s for _, s in sorted(out)]

    def _digit_token_ids(self) -> dict[str, int]:
        with self._lock:
            if self._digit_ids is None:
                root = self.settings.api_base[: -len("/v1")]
                ids = {}
                for d in DIGITS:
                    try:
                        data = self._request(
                            "POST", root + "/tokenize", {"model": self.model(), "prompt": d}
                        )
                    except _NotFound as e:
                        raise BackboneError(
                            "backbone has no /tokenize route; use forced_choice=extension"
                        ) from e
                    toks = data.get("tokens") if isinstance(data, dict) else None
                    if not toks:
                        raise BackboneError(f"backbone could not tokenize {d!r}: {str(data)[:200]}")
                    ids[d] = int(toks[-1])  # SentencePiece may prepend "▁"; the digit is last
                self._digit_ids = ids
            return self._digit_ids


def _unusable(reply: BaseModel) -> str | None:
    """Why a reply of the right shape still holds no answer: no choice, or null content."""
    comps = reply.completions if isinstance(reply, BatchChatCompletion) else [reply]
    for c in comps:
        assert isinstance(c, ChatCompletion)  # the only shapes _post_validated reads
        if not c.choices:
            return f"a completion has no choices: {c.model_dump_json()[:200]}"
        if c.choices[0].message.content is None:
            return f"a completion's message content is null: {c.model_dump_json()[:200]}"
    return None


def _logprob_items(c: ChatCompletion) -> list[dict[str, Any]]:
    lp = c.choices[0].logprobs
    return [t.model_dump() for t in lp.content] if lp and lp.content else []
