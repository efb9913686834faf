"""One POST to an OpenAI-compatible endpoint with retries on transport errors, 5xx/429 and
malformed 200 replies: shared by the judge and the simulator."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx


async def post_with_retries(
    client: httpx.AsyncClient,
    url: str,
    body: dict[str, Any],
    *,
    max_retries: int,
    parse: Callable[[httpx.Response], Any],
    malformed: tuple[type[Exception], ...],
    describe: Callable[[Exception, httpx.Response], str],
    error: type[Exception],
    what: str,
) -> Any:
    """`parse(reply)` of the first good reply; `error` after the last attempt, or at once for a
    4xx other than 429. `describe` says why a reply `parse` refused (one of `malformed`) was bad."""
    last = "no attempt"
    for attempt in range(max_retries + 1):
        if attempt:
            await asyncio.sleep(min(2.0, 0.2 * 2**attempt))
        try:
            r = await client.post(url, json=body)
        except httpx.HTTPError as e:
            last = f"{type(e).__name__}: {e}"
            continue
        if r.status_code >= 500 or r.status_code == 429:
            last = f"HTTP {r.status_code}: {r.text[:200]}"
            continue
        if r.status_code != 200:
            raise error(f"{what} answered HTTP {r.status_code}: {r.text[:200]}")
        try:
            return parse(r)
        except malformed as e:
            last = describe(e, r)
    raise error(f"{what} failed after {max_retries + 1} attempts: {last}")
