"""Judge clients: any OpenAI-compatible chat endpoint (vicuna-evaluator on vLLM, the project's
small model server), OpenAI, Anthropic. Temperature 0. A failure raises `JudgeError`, which the
scorers record as an error state of category "judge", never as a wrong answer.

Configuration (`HARNESS_JUDGE_*`): PROVIDER (openai-compatible | openai | anthropic | none),
URL (base URL, e.g. http://127.0.0.1:8000/v1), MODEL (default `vicuna-13b-v1.1`, the name FIND's
evaluator is served under), API_KEY, TIMEOUT_S, MAX_RETRIES, CONCURRENCY, MAX_TOKENS, CEILING.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from typing import Any, Literal

import httpx
from pydantic import BaseModel
from pydantic_settings import BaseSettings, SettingsConfigDict


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


class JudgeError(RuntimeError):
    """The judge could not give a verdict (HTTP error, timeout, malformed reply, not configured)."""


class MalformedJudgeReply(JudgeError):
    """A 200 reply with no verdict text in it (not JSON, wrong shape, no choice, null content,
    no text block). Retried like a 5xx: an empty reply is never read as a wrong verdict."""


class JudgeReply(BaseModel):
    text: str
    model: str  # the model id the endpoint reports (or the one requested)


class JudgeClient(ABC):
    model: str = ""

    @abstractmethod
    async def complete(self, system: str, user: str) -> JudgeReply: ...

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
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.model = model
        self.max_retries = max_retries
        self.max_tokens = max_tokens
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(timeout=timeout_s, headers=headers, transport=transport)

    async def complete(self, system: str, user: str) -> JudgeReply:
        body = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": 0,
            "max_tokens": self.max_tokens,
        }
        last = "no attempt"
        for attempt in range(self.max_retries + 1):
            if attempt:
                await asyncio.sleep(min(2.0, 0.2 * 2**attempt))
            try:
                r = await self._client.post(f"{self.url}/chat/completions", json=body)
            except httpx.HTTPError as e:
                last = f"{type(e).__name__}: {e}"
                continue
            if r.status_code >= 500 or r.status_code == 429:
                last = f"HTTP {r.status_code}: {r.text[:200]}"
                continue
            if r.status_code != 200:
                raise JudgeError(f"judge endpoint answered HTTP {r.status_code}: {r.text[:200]}")
            try:
                return _parse_openai_body(r, self.model)
            except MalformedJudgeReply as e:
                last = str(e)
        raise JudgeError(f"judge endpoint failed after {self.max_retries + 1} attempts: {last}")

    async def aclose(self) -> None:
        await self._client.aclose()


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


def make_judge(settings: JudgeSettings | None = None) -> JudgeClient:
    """The configured judge; raises JudgeError when none is configured."""
    s = settings or JudgeSettings()
    common = dict(timeout_s=s.timeout_s, max_retries=s.max_retries, max_tokens=s.max_tokens)
    if s.provider == "none":
        raise JudgeError("no judge configured (HARNESS_JUDGE_PROVIDER=none)")
    if s.provider == "openai-compatible":
        if not s.url:
            raise JudgeError(
                "no judge configured: set HARNESS_JUDGE_URL to an OpenAI-compatible endpoint "
                "(e.g. vicuna-evaluator on vLLM, or `harness backbone serve`)"
            )
        return OpenAICompatibleJudge(s.url, s.model, api_key=s.api_key, **common)
    if s.provider == "openai":
        return OpenAIJudge(s.model, api_key=s.api_key, url=s.url, **common)
    return AnthropicJudge(s.model, api_key=s.api_key, url=s.url, **common)
