"""Resource limits of the REST API (issue 22): request body size and live event streams.

Both are operator settings (HARNESS_API_MAX_BODY_BYTES, HARNESS_SSE_MAX_STREAMS,
HARNESS_SSE_MAX_PER_CLIENT); an API caller cannot change them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from starlette.exceptions import HTTPException

Scope = dict[str, Any]
ASGIApp = Callable[..., Any]


class BodyLimit:
    """ASGI middleware: a request body over `max_bytes` gets 413 before any route reads it, by
    its Content-Length or, for chunked bodies, as soon as the bytes received pass the limit."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Callable[..., Any], send: Callable[..., Any]):  # type: ignore[no-untyped-def]
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    too_big = int(value) > self.max_bytes
                except ValueError:
                    too_big = False  # the server (h11) refuses a malformed length itself
                if too_big:
                    return await self._refuse(send)
        seen = 0

        async def limited_receive() -> dict[str, Any]:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    # raised while FastAPI reads the body: its exception handler answers 413
                    raise HTTPException(413, _too_large(self.max_bytes))
            return message

        await self.app(scope, limited_receive, send)

    async def _refuse(self, send: Callable[..., Any]) -> None:
        await send_json_error(send, 413, _too_large(self.max_bytes), close=True)


async def send_json_error(
    send: Callable[..., Any], status: int, detail: str, *, close: bool = False
) -> None:
    """Answer `{"detail": ...}` with `status` from ASGI middleware, before any route runs."""
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _too_large(max_bytes: int) -> str:
    return f"request body larger than {max_bytes} bytes (the operator's HARNESS_API_MAX_BODY_BYTES)"


class StreamSlots:
    """Counts what is open (event streams by default), in total and per client address;
    `acquire` says why not."""

    def __init__(self, total: int, per_client: int, what: str = "open event streams") -> None:
        self.total, self.per_client, self.what = total, per_client, what
        self._open: dict[str, int] = {}
        self._lock = threading.Lock()

    def acquire(self, client: str) -> str | None:
        """None when a slot was taken (release it with `release(client)`); else the reason."""
        with self._lock:
            if self._open.get(client, 0) >= self.per_client:
                return f"too many {self.what} from this client (at most {self.per_client})"
            if sum(self._open.values()) >= self.total:
                return f"too many {self.what} on this server (at most {self.total})"
            self._open[client] = self._open.get(client, 0) + 1
            return None

    def release(self, client: str) -> None:
        with self._lock:
            n = self._open.get(client, 0) - 1
            if n > 0:
                self._open[client] = n
            else:
                self._open.pop(client, None)

    def count(self) -> int:
        with self._lock:
            return sum(self._open.values())
