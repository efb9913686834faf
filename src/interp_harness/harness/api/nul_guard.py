"""ASGI middleware: a request whose path or query string holds a NUL character gets 400 before any
route runs (no id, filter or cursor of ours contains one; PostgreSQL cannot even compare with one,
which made such GETs a 500)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import unquote_to_bytes

from interp_harness.harness.api.limits import send_json_error

ASGIApp = Callable[..., Any]
DETAIL = "a NUL character (%00) is not allowed in a URL"


def has_nul(scope: dict[str, Any]) -> bool:
    path = scope.get("raw_path") or scope.get("path", "").encode("utf-8", "surrogateescape")
    return b"\x00" in unquote_to_bytes(path) or b"\x00" in unquote_to_bytes(
        scope.get("query_string", b"")
    )


class RejectNul:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not has_nul(scope):
            return await self.app(scope, receive, send)
        await send_json_error(send, 400, DETAIL)
