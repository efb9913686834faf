"""Judge clients: any OpenAI-compatible chat endpoint (vicuna-evaluator on vLLM, the project's
small model server), OpenAI, Anthropic. Temperature 0. A failure raises `JudgeError`, which the
scorers record as an error state of category "judge", never as a wrong answer.

Configuration (`HARNESS_JUDGE_*`): PROVIDER (openai-compatible | openai | anthropic | none),
URL (base URL, e.g. http://127.0.0.1:8000/v1), MODEL (default `vicuna-13b-v1.1`, the name FIND's
evaluator is served under), API_KEY, TIMEOUT_S, MAX_RETRIES, CONCURRENCY, MAX_TOKENS, CEILING,
MODE (auto | generate | forced-choice).

Modes of the OpenAI-compatible judge: `generate` is FIND's (the judge writes a reply, the index is
read from it); `forced-choice` (only with the project's own server, which has the `forced_choice`
extension) continues the assistant message "[ANSWER]: " by exactly one token restricted to the
indices, and the verdict is the index with the highest logprob. `auto` picks forced-choice when
GET {url}/models says `owned_by: interp-harness`, else generate.
"""

from __future__ import annotations

import asyncio
import math
from abc import ABC, abstractmethod
from typing import Any, Literal

import httpx
from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from interp_harness.evaluator.retrying_post import post_with_retries


class JudgeSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HARNESS_JUDGE_")

    provider: Literal["openai-compatible", "openai", "anthropic", "none"] = "openai-compatible"
    url: str | None = None
    model: str = "vicuna-13b-v1.1"
    api_key: str | None = None
    timeout_s: float = 60.0
    max_retries: int = 2
    concurrency: int = 8
    max_tokens: int = 32
    ceiling: bool = True  # also judge the ground-truth description (FIND Table A3's check)
    # the ceiling on at most this many of each target's unit tests (None: all, as FIND's A3).
    # Halves the ceiling's judge work at 5 of 10, for a wider interval (the main job's choice).
    ceiling_tests: int | None = Field(None, ge=1)
    mode: Literal["auto", "generate", "forced-choice"] = "auto"


JudgeMode = Literal["generate", "forced-choice"]
OUR_SERVER_OWNER = "interp-harness"  # `owned_by` of the project's own server's models


class JudgeError(RuntimeError):
    """The judge could not give a verdict (HTTP error, timeout, malformed reply, not configured)."""


class JudgeNotConfigured(JudgeError):
    """No judge is configured: description scores cannot be computed (the report says how to
    configure one)."""


class MalformedJudgeReply(JudgeError):
    """A 200 reply with no verdict text in it (not JSON, wrong shape, no choice, null content,
    no text block). Retried like a 5xx: an empty reply is never read as a wrong verdict."""


class JudgeReply(BaseModel):
    text: str
    model: str  # the model id the endpoint reports (or the one requested)


class ChoiceReply(BaseModel):
    """A forced-choice verdict: the option with the highest logprob, and every option's logprob."""

    choice: int  # 0-based index into the options
    logprobs: list[float]  # per option, full-vocabulary logprob of its first token
    model: str


class JudgeClient(ABC):
    model: str = ""

    @abstractmethod
    async def complete(self, system: str, user: str) -> JudgeReply: ...

    async def mode(self) -> JudgeMode:
        return "generate"

    async def choose(
        self, system: str, users: list[str], options: list[str], prefill: str
    ) -> list[ChoiceReply]:
        raise JudgeError(f"{type(self).__name__} has no forced-choice mode")

    async def aclose(self) -> None:  # noqa: B027 - optional
        pass


class OpenAICompatibleJudge(JudgeClient):
    """POST {url}/chat/completions with httpx; retries transport errors and 5xx/429."""

    def __init__(
        self,
        url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 2,
        max_tokens: int = 32,
        mode: Literal["auto", "generate", "forced-choice"] = "auto",
        batch: bool = True,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """`batch`: forced-choice prompts go as one request to the server's batch endpoint
        (shared prefix computed once); False sends one request per prompt (the benchmark's
        baseline)."""
        self.url = url.rstrip("/")
        self.model = model
        self.max_retries = max_retries
        self.max_tokens = max_tokens
        self._mode = mode
        self.batch = batch
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(timeout=timeout_s, headers=headers, transport=transport)

    async def mode(self) -> JudgeMode:
        if self._mode == "auto":
            self._mode = await _detect_mode(self._client, self.url)
        return self._mode

    async def _post(self, path: str, body: dict[str, Any], parse: Any) -> Any:
        """POST with retries on transport errors, 5xx/429 and malformed 200 replies."""
        return await post_with_retries(
            self._client, f"{self.url}{path}", body, max_retries=self.max_retries, parse=parse,
            malformed=(MalformedJudgeReply,), describe=lambda e, _: str(e), error=JudgeError,
            what="judge endpoint",
        )  # fmt: skip

    async def complete(self, system: str, user: str) -> JudgeReply:
        body = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": 0,
            "max_tokens": self.max_tokens,
        }
        return await self._post(
            "/chat/completions", body, lambda r: _parse_openai_body(r, self.model)
        )

    async def choose(
        self, system: str, users: list[str], options: list[str], prefill: str
    ) -> list[ChoiceReply]:
        """Forced choice on the project's server: the assistant message `prefill` is continued by
        one token restricted to the options' first tokens (which must differ)."""
        convs = [
            [
                {"role": "system", "content": system},
                {"role": "user", "content": u},
                {"role": "assistant", "content": prefill},
            ]
            for u in users
        ]
        params = {
            "model": self.model,
            "temperature": 0,
            "max_tokens": 1,
            "forced_choice": options,
        }

        def parse_one(data: Any, raw: str) -> ChoiceReply:
            return _parse_choice(data, options, raw, self.model)

        if not self.batch:
            return list(
                await asyncio.gather(
                    *(
                        self._post(
                            "/chat/completions",
                            params | {"messages": c},
                            lambda r: parse_one(_json(r), r.text),
                        )
                        for c in convs
                    )
                )
            )
        out: list[ChoiceReply] = []
        for i in range(0, len(convs), BATCH_LIMIT):
            out += await self._post(
                "/batch/chat/completions",
                params | {"messages_list": convs[i : i + BATCH_LIMIT]},
                lambda r, n=len(convs[i : i + BATCH_LIMIT]): _parse_batch(r, n, parse_one),
            )
        return out

    async def aclose(self) -> None:
        await self._client.aclose()


BATCH_LIMIT = 256  # prompts per batch request (the server takes up to 1024)
_DETECTED: dict[str, JudgeMode] = {}


async def _detect_mode(client: httpx.AsyncClient, url: str) -> JudgeMode:
    """forced-choice iff the endpoint is the project's own server (GET /models: `owned_by`)."""
    if url in _DETECTED:
        return _DETECTED[url]
    try:
        r = await client.get(f"{url}/models")
        data = r.json()["data"] if r.status_code == 200 else []
        ours = any(isinstance(m, dict) and m.get("owned_by") == OUR_SERVER_OWNER for m in data)
    except (httpx.HTTPError, ValueError, KeyError, TypeError):
        return "generate"  # not cached: the judge call itself will report an unreachable server
    _DETECTED[url] = "forced-choice" if ours else "generate"
    return _DETECTED[url]


def _parse_batch(r: httpx.Response, n: int, parse_one: Any) -> list[ChoiceReply]:
    data = _json(r)
    comps = data.get("completions") if isinstance(data, dict) else None
    if not isinstance(comps, list) or len(comps) != n:
        raise MalformedJudgeReply(f"batch reply without {n} completions: {r.text[:200]!r}")
    return [parse_one(c, r.text) for c in comps]


def _parse_choice(data: Any, options: list[str], raw: str, requested: str) -> ChoiceReply:
    """The options' logprobs from a forced-choice reply (the server lists them in option order,
    as `top_logprobs` of the one generated token); the verdict is their argmax."""
    try:
        top = data["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
        tokens = [t["token"] for t in top]
        lps = [float(t["logprob"]) for t in top]
    except (KeyError, IndexError, TypeError, ValueError) as e:
        raise MalformedJudgeReply(
            f"forced-choice reply without logprobs ({type(e).__name__}): {raw[:200]!r}"
        ) from e
    if len(lps) != len(options) or any(
        not o.startswith(t) for t, o in zip(tokens, options, strict=True)
    ):
        raise MalformedJudgeReply(
            f"forced-choice reply lists {tokens!r}, not the first tokens of {options!r}"
        )
    if any(math.isnan(x) for x in lps):
        raise MalformedJudgeReply(f"forced-choice logprobs are not numbers: {lps!r}")
    best = max(range(len(lps)), key=lambda i: lps[i])
    return ChoiceReply(choice=best, logprobs=lps, model=str(data.get("model") or requested))


def _json(r: httpx.Response) -> Any:
    try:
        return r.json()
    except ValueError as e:
        raise MalformedJudgeReply(f"judge reply is not JSON: {r.text[:200]!r}") from e


def _parse_openai_body(r: httpx.Response, requested: str) -> JudgeReply:
    data = _json(r)
    try:
        choices = data["choices"]
        if not choices:
            raise MalformedJudgeReply(f"judge reply has no choices: {r.text[:200]!r}")
        text = choices[0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as e:
        raise MalformedJudgeReply(
            f"malformed judge reply ({type(e).__name__}): {r.text[:200]!r}"
        ) from e
    if not isinstance(text, str):
        raise MalformedJudgeReply(f"judge reply has no text content: {r.text[:200]!r}")
    return JudgeReply(text=text, model=str(data.get("model") or requested))


def _parse_anthropic_body(r: httpx.Response, requested: str) -> JudgeReply:
    data = _json(r)
    try:
        texts = [b["text"] for b in data["content"] if b["type"] == "text"]
    except (KeyError, TypeError) as e:
        raise MalformedJudgeReply(
            f"malformed judge reply ({type(e).__name__}): {r.text[:200]!r}"
        ) from e
    if not texts or not all(isinstance(t, str) for t in texts):
        raise MalformedJudgeReply(f"judge reply has no text content: {r.text[:200]!r}")
    return JudgeReply(text="".join(texts), model=str(data.get("model") or requested))


class _SDKJudge(JudgeClient):
    """Common settings of the SDK-backed judges. The SDK retries HTTP failures and times out by
    itself; the reply body is read here (the SDK would build an object from anything) and a
    malformed one is retried up to `max_retries` times."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        url: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 2,
        max_tokens: int = 32,
    ) -> None:
        self.model = model
        self.max_tokens = max_tokens
        self.max_retries = max_retries
        self._client = self._make_client(
            api_key=api_key, base_url=url, timeout=timeout_s, max_retries=max_retries
        )

    @abstractmethod
    def _make_client(self, **kwargs: object) -> Any: ...

    @abstractmethod
    async def _once(self, system: str, user: str) -> JudgeReply: ...

    async def complete(self, system: str, user: str) -> JudgeReply:
        last: MalformedJudgeReply | None = None
        for _ in range(self.max_retries + 1):
            try:
                return await self._once(system, user)
            except MalformedJudgeReply as e:
                last = e
        raise JudgeError(
            f"{type(self).__name__} failed after {self.max_retries + 1} attempts: {last}"
        ) from last

    async def aclose(self) -> None:
        await self._client.close()


class OpenAIJudge(_SDKJudge):
    def _make_client(self, **kwargs: object) -> Any:
        import openai

        return openai.AsyncOpenAI(**kwargs)

    async def _once(self, system: str, user: str) -> JudgeReply:
        import openai

        try:
            raw = await self._client.chat.completions.with_raw_response.create(
                model=self.model,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                temperature=0,
                max_tokens=self.max_tokens,
            )
        except openai.OpenAIError as e:
            raise JudgeError(f"OpenAI judge failed: {type(e).__name__}: {e}") from e
        return _parse_openai_body(raw.http_response, self.model)


class AnthropicJudge(_SDKJudge):
    def _make_client(self, **kwargs: object) -> Any:
        import anthropic

        return anthropic.AsyncAnthropic(**kwargs)

    async def _once(self, system: str, user: str) -> JudgeReply:
        import anthropic

        try:
            raw = await self._client.messages.with_raw_response.create(
                model=self.model,
                system=system,
                messages=[{"role": "user", "content": user}],
                max_tokens=self.max_tokens,
                # this SDK version has no `temperature` argument; the API still takes the field
                extra_body={"temperature": 0},
            )
        except anthropic.AnthropicError as e:
            raise JudgeError(f"Anthropic judge failed: {type(e).__name__}: {e}") from e
        return _parse_anthropic_body(raw.http_response, self.model)


HOW_TO = (
    "Set HARNESS_JUDGE_URL to an OpenAI-compatible endpoint (vicuna-evaluator on vLLM, as FIND; "
    "or the project's server: `harness backbone serve`, then HARNESS_JUDGE_URL="
    "http://127.0.0.1:8000/v1 HARNESS_JUDGE_MODEL=SmolLM2-135M-Instruct); scripts/main_job.sh "
    "starts one itself"
)


def make_judge(settings: JudgeSettings | None = None) -> JudgeClient:
    """The configured judge; raises JudgeError when none is configured."""
    s = settings or JudgeSettings()
    common = dict(timeout_s=s.timeout_s, max_retries=s.max_retries, max_tokens=s.max_tokens)
    if s.provider == "none":
        raise JudgeNotConfigured(f"no judge configured (HARNESS_JUDGE_PROVIDER=none). {HOW_TO}")
    if s.provider == "openai-compatible":
        if not s.url:
            raise JudgeNotConfigured(f"no judge configured. {HOW_TO}")
        return OpenAICompatibleJudge(s.url, s.model, api_key=s.api_key, mode=s.mode, **common)
    if s.mode == "forced-choice":
        raise JudgeError(
            f"HARNESS_JUDGE_MODE=forced-choice needs provider openai-compatible "
            f"(the project's own server), not {s.provider}"
        )
    if s.provider == "openai":
        return OpenAIJudge(s.model, api_key=s.api_key, url=s.url, **common)
    return AnthropicJudge(s.model, api_key=s.api_key, url=s.url, **common)
