"""A request body limit for the model servers (ASGI middleware, in front of every route).

A body over `max_bytes` is refused with a 413 before any JSON parsing or tokenizing: at once from
its `Content-Length`, or, for a body sent without one (chunked), as soon as what arrived passes
the limit (what is read is held, never more than the limit). The refusal closes the connection:
the rest of the body is never read.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

DEFAULT_MAX_BODY_MIB = 16  # far above any request the harness sends (a FIND call: < 1 MiB)


def too_large(size: int | None, max_bytes: int) -> str:
    got = f"{size} bytes" if size is not None else f"more than {max_bytes} bytes"
    return (
        f"the request body holds {got}; this server accepts at most {max_bytes} bytes "
        f"({max_bytes / 2**20:g} MiB, the operator's --max-body-mib): send shorter texts "
        "or split the request"
    )


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        declared = headers.get(b"content-length")
        if declared is not None:
            size = int(declared) if declared.isdigit() else None
            if size is None or size > self.max_bytes:
                await _refuse(send, too_large(size, self.max_bytes))
                return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client left while sending
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_bytes:
                await _refuse(send, too_large(None, self.max_bytes))
                return
            if not message.get("more_body", False):
                break
        await self.app(scope, _replay(b"".join(chunks), receive), send)


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body as one message, then the real channel (where a disconnect arrives)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


async def _refuse(send: Send, message: str) -> None:
    error = {"message": message, "type": "invalid_request_error", "param": None}
    body = json.dumps({"error": {**error, "code": "request_too_large"}}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),  # the unread rest of the body is never read
    ]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})
