"""JSON over HTTP with bounded retries, shared by the clients of our model services.

Connection failures, connect timeouts, 429, 5xx and non-JSON replies are retried with jittered
exponential backoff; a read timeout fails at once unless `retry_timeouts` (a server too slow to
answer stays slow: retrying would pile more work on it); other 4xx fail at once (retrying will
not help); 404/405 raise `NotFound` so callers can fall back. Every other failure raises the
caller's error class (category `infrastructure`) naming the service.
"""

from __future__ import annotations

import os
import random
import time
from typing import Any, ClassVar, Self

import httpx
from pydantic import BaseModel, Field


class RetryPolicy(BaseModel):
    timeout_s: float = Field(60.0, gt=0)  # per HTTP request (read)
    connect_timeout_s: float = Field(5.0, gt=0)
    retries: int = Field(2, ge=0, le=10)  # extra attempts after the first
    backoff_s: float = Field(0.5, ge=0)
    retry_timeouts: bool = False


class ServiceSettings(RetryPolicy):
    """Where a model service answers (`url`) and how to call it. `from_env` reads the URL from
    the variable `URL_ENV` and each field of `ENV` from the variable it names (operator)."""

    URL_ENV: ClassVar[str] = ""
    ENV: ClassVar[dict[str, str]] = {}

    url: str

    @classmethod
    def from_env(cls) -> Self | None:
        url = os.environ.get(cls.URL_ENV)
        if not url:
            return None
        return cls(url=url, **{k: os.environ[v] for k, v in cls.ENV.items() if os.environ.get(v)})

    @property
    def api_base(self) -> str:
        u = self.url.rstrip("/")
        return u if u.endswith("/v1") else u + "/v1"


class NotFound(Exception):
    def __init__(self, status: int, body: str = "") -> None:
        super().__init__(status)
        self.status, self.body = status, body


def request_json(
    http: httpx.Client,
    method: str,
    url: str,
    body: Any,
    policy: RetryPolicy,
    *,
    service: str,
    error: type[Exception],
) -> Any:
    """The JSON reply of one request, retried per `policy`; `service` names it in errors."""
    p = policy
    last = ""
    attempt = 0
    for attempt in range(p.retries + 1):
        if attempt:
            time.sleep(p.backoff_s * (2 ** (attempt - 1)) * (0.5 + random.random()))
        try:
            r = http.request(method, url, json=body)
        except httpx.ConnectTimeout as e:
            last = f"connect timed out after {p.connect_timeout_s:g}s ({type(e).__name__})"
            continue
        except httpx.TimeoutException as e:
            last = f"timed out after {p.timeout_s:g}s ({type(e).__name__})"
            if p.retry_timeouts:
                continue
            break
        except httpx.TransportError as e:
            last = f"connection failed ({type(e).__name__}: {e})"
            continue
        if r.status_code in (404, 405):
            raise NotFound(r.status_code, r.text[:300])
        if r.status_code == 429 or r.status_code >= 500:
            last = f"HTTP {r.status_code}: {r.text[:200]}"
            continue
        if r.status_code >= 400:
            refused = error(f"{service} refused the request: HTTP {r.status_code}: {r.text[:300]}")
            refused.status, refused.body = r.status_code, r.text[:2000]  # for callers that sort
            raise refused
        try:
            return r.json()
        except ValueError:
            last = f"reply is not JSON: {r.text[:120]!r}"
            continue
    raise error(f"{service} unavailable: {last} (attempts: {attempt + 1})")
