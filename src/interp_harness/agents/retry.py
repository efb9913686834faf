"""Retries with exponential backoff and full jitter, and token prices, for the provider agents."""

from __future__ import annotations

import asyncio
import functools
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from interp_harness.agents.base import Agent, AgentError, AgentReply, Message, Usage
from interp_harness.agents.replies import MalformedReply, Turn, check_empty_turn

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class Failure:
    """How a provider exception is handled: retried, or raised at once with a category."""

    retryable: bool
    category: str  # agent | infrastructure | budget
    message: str
    retry_after: float | None = None  # seconds, from a Retry-After header when the server sent one


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 5  # retries after the first attempt
    base_delay: float = 1.0  # seconds; the n-th retry waits up to base_delay * 2**n
    max_delay: float = 60.0

    def delay(
        self, attempt: int, retry_after: float | None = None, rng: random.Random | None = None
    ) -> float:
        """Full jitter (uniform in [0, cap]) so that many episodes do not retry in lockstep;
        a server's Retry-After is respected as a lower bound."""
        cap = min(self.max_delay, self.base_delay * (2**attempt))
        wait = (rng or random).uniform(0, cap)
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.max_delay))
        return wait


async def call_with_retries(
    call: Callable[[], Awaitable[T]],
    classify: Callable[[BaseException], Failure],
    policy: RetryPolicy,
    *,
    what: str,
) -> T:
    """Run `call`; on a retryable failure wait and retry, at most `policy.max_retries` times.
    Raises AgentError with the classified category (for retryable failures once retries run out:
    `infrastructure` for HTTP and network failures, `agent` for malformed replies)."""
    attempt = 0
    while True:
        try:
            return await call()
        except asyncio.CancelledError:
            raise
        except Exception as e:
            f = classify(e)
            if not f.retryable:
                raise AgentError(
                    f"{what}: {f.message}", category=f.category, retryable=False
                ) from e
            if attempt >= policy.max_retries:
                raise AgentError(
                    f"{what}: giving up after {attempt + 1} attempts: {f.message}",
                    category=f.category,
                    retryable=True,
                ) from e
            wait = policy.delay(attempt, f.retry_after)
            log.warning(
                "%s: %s; retry %d/%d in %.2fs",
                what,
                f.message,
                attempt + 1,
                policy.max_retries,
                wait,
            )
            await asyncio.sleep(wait)
            attempt += 1


def retry_after_seconds(headers: Any) -> float | None:
    """The Retry-After header in seconds (the date form is ignored)."""
    if headers is None:
        return None
    try:
        value = headers.get("retry-after")
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def policy_from_options(options: dict[str, Any]) -> RetryPolicy:
    return RetryPolicy(
        max_retries=int(options.get("max_retries", 5)),
        base_delay=float(options.get("backoff_base", 1.0)),
        max_delay=float(options.get("backoff_max", 60.0)),
    )


class Price(BaseModel):
    """USD per million tokens."""

    prompt: float = Field(ge=0)
    completion: float = Field(ge=0)


def make_usage(
    prompt_tokens: int,
    completion_tokens: int,
    model: str | None | tuple[str | None, ...],
    prices: Any,
) -> Usage:
    """Usage with cost when a price is given. `prices` is either one price
    `{"prompt": 2.5, "completion": 10}` or a table `{"model-id": {"prompt": ..., "completion": ...}}`;
    a model missing from a table costs 0 (and says so in the log). `model` may list several names
    (the requested id, the id the server answered with); the first one in the table is used."""
    names = model if isinstance(model, tuple) else (model,)
    cost = 0.0
    if prices:
        price: Price | None = None
        if isinstance(prices, Price):
            price = prices
        elif isinstance(prices, dict) and "prompt" in prices and "completion" in prices:
            price = Price(**prices)
        elif isinstance(prices, dict) and any(n in prices for n in names):
            price = Price.model_validate(prices[next(n for n in names if n in prices)])
        else:
            log.warning("no price for model %r in the price table; cost recorded as 0", model)
        if price is not None:
            cost = (prompt_tokens * price.prompt + completion_tokens * price.completion) / 1e6
    return Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, cost_usd=cost)


def classify_provider_error(
    e: BaseException,
    *,
    timeout_types: tuple[type[BaseException], ...],
    connection_types: tuple[type[BaseException], ...],
) -> Failure:
    """The common HTTP rules of the OpenAI and Anthropic SDKs (both expose `status_code`).

    Retried: timeouts, connection failures, 408, 409, 429 and 5xx (incl. Anthropic's 529), and
    200 replies with nothing usable in them (`MalformedReply`, category `agent`).
    Not retried: authentication/permission (401/403) and bad requests, category `agent`;
    out of credit (402, or a 429 whose body says the quota is exhausted), category `budget`, so a
    "no credits" error can never be mistaken for a score."""
    if isinstance(e, MalformedReply):
        return Failure(True, e.category, str(e))
    if isinstance(e, timeout_types):
        return Failure(True, "infrastructure", f"request timed out ({type(e).__name__})")
    if isinstance(e, connection_types):
        return Failure(True, "infrastructure", f"connection failed: {e}")
    status = getattr(e, "status_code", None)
    if not isinstance(status, int):
        return Failure(False, "agent", f"{type(e).__name__}: {e}")
    text = str(getattr(e, "body", "") or "") + " " + str(e)
    response = getattr(e, "response", None)
    retry_after = retry_after_seconds(getattr(response, "headers", None))
    lowered = text.lower()
    if status == 402 or (
        status == 429 and ("insufficient_quota" in lowered or "credit" in lowered)
    ):
        return Failure(False, "budget", f"HTTP {status}: provider quota or credit exhausted: {e}")
    if status in (408, 409, 429) or status >= 500:
        return Failure(True, "infrastructure", f"HTTP {status}: {e}", retry_after)
    if status in (401, 403):
        return Failure(
            False, "agent", f"HTTP {status}: authentication failed (check the API key): {e}"
        )
    return Failure(False, "agent", f"HTTP {status}: {e}")


def sdk_classifier(sdk: Any) -> Callable[[BaseException], Failure]:
    """`classify_provider_error` for an SDK module that exposes `APITimeoutError` and
    `APIConnectionError` (both `openai` and `anthropic` do)."""
    return functools.partial(
        classify_provider_error,
        timeout_types=(sdk.APITimeoutError,),
        connection_types=(sdk.APIConnectionError,),
    )


class ProviderAgent(Agent):
    """An agent backed by a provider's HTTP API (openai, anthropic): what `provider_turn` reads."""

    model: str
    policy: RetryPolicy
    prices: Any


async def provider_turn(
    agent: ProviderAgent,
    conversation: list[Message],
    call: Callable[[], Awaitable[Turn]],
    classify: Callable[[BaseException], Failure],
    *,
    what: str,
) -> AgentReply:
    """One turn of a provider agent: `call` with retries, the empty-answer check, and usage
    priced under the requested model id or the one the server answered with."""
    text, reply, calls = await call_with_retries(call, classify, agent.policy, what=what)
    check_empty_turn(agent, conversation, text, what=what, calls=len(calls))
    usage = make_usage(*reply.tokens(), (agent.model, reply.model), agent.prices)
    return AgentReply(content=text, tool_calls=calls, usage=usage, model=reply.model or agent.model)
