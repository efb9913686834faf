"""Who is looking at a page: an authorised viewer may see ground truth of finished episodes.

With no bearer tokens configured (HARNESS_API_TOKENS empty: local use) everyone is authorised, as
everyone may also start runs over the API. With tokens, a browser logs in once with one of them
(the login form): the token is kept in an HttpOnly, SameSite=Strict cookie and checked on every
request like the API's bearer header. Forms that change state carry a CSRF field derived from the
token and a per-process secret, so another site cannot post them with the visitor's cookie.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from fastapi import Request

COOKIE = "harness_token"
# per server process: a form rendered by another process (or another site) does not validate
_SECRET = secrets.token_bytes(32)


def configured_tokens(request: Request) -> list[str]:
    return list(request.app.state.services.settings.tokens)


def valid_token(request: Request, token: str) -> bool:
    return bool(token) and any(
        hmac.compare_digest(token.encode(), t.encode()) for t in configured_tokens(request)
    )


def session_token(request: Request) -> str | None:
    """The cookie's token when it is one of the configured tokens, else None."""
    token = request.cookies.get(COOKIE) or ""
    return token if valid_token(request, token) else None


def is_authorised(request: Request) -> bool:
    return not configured_tokens(request) or session_token(request) is not None


def csrf_value(request: Request) -> str:
    """The value forms must send back: bound to the session's token (or to nothing)."""
    key = _SECRET + (session_token(request) or "").encode()
    return hmac.new(key, b"harness-web-csrf", hashlib.sha256).hexdigest()


def csrf_ok(request: Request, sent: str | None) -> bool:
    return bool(sent) and hmac.compare_digest(sent.encode(), csrf_value(request).encode())
