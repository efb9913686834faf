"""Who is looking at a page: an authorised viewer may see ground truth of finished episodes.

With no bearer tokens configured (HARNESS_API_TOKENS empty: local use) everyone is authorised, as
everyone may also start runs over the API. With tokens, a browser logs in once with one of them
(the login form) and gets a session cookie: an HMAC of the token under a per-process secret, never
the token itself. It is checked on every request against the configured tokens, so it stops
working when its token is removed from the configuration (or the server restarts). Cookies are
HttpOnly and SameSite=Strict, and Secure when the page was served over https (the request's own
scheme, which comes from X-Forwarded-Proto only when the operator trusts the proxy:
HARNESS_TRUSTED_PROXIES).

Every form that changes state (log in, log out, start a run) carries a CSRF field: an HMAC of a
random per-browser cookie (and of the session), so another site can neither read nor forge it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from fastapi import Request
from starlette.responses import Response

COOKIE = "harness_session"
CSRF_COOKIE = "harness_csrf"
# per server process: a cookie or form made by another process (or another site) does not validate
_SECRET = secrets.token_bytes(32)


def _mac(*parts: str) -> str:
    return hmac.new(_SECRET, "\x00".join(parts).encode(), hashlib.sha256).hexdigest()


def configured_tokens(request: Request) -> list[str]:
    return list(request.app.state.services.settings.tokens)


def valid_token(request: Request, token: str) -> bool:
    return bool(token) and any(
        hmac.compare_digest(token.encode(), t.encode()) for t in configured_tokens(request)
    )


def session_value(token: str) -> str:
    """The session cookie's value for `token` (one-way: the cookie does not reveal the token)."""
    return _mac("session", token)


def session_token(request: Request) -> str | None:
    """The configured token whose session the cookie holds, else None."""
    value = (request.cookies.get(COOKIE) or "").encode()
    if not value:
        return None
    for t in configured_tokens(request):
        if hmac.compare_digest(value, session_value(t).encode()):
            return t
    return None


def is_authorised(request: Request) -> bool:
    return not configured_tokens(request) or session_token(request) is not None


def is_https(request: Request) -> bool:
    return request.url.scheme == "https"


def _browser_id(request: Request) -> str:
    """The browser's CSRF cookie; a new one (set by `set_cookies`) when it has none."""
    bid = request.cookies.get(CSRF_COOKIE) or getattr(request.state, "new_browser_id", None)
    if not bid:
        bid = request.state.new_browser_id = secrets.token_urlsafe(32)
    return bid


def csrf_value(request: Request) -> str:
    """The value forms must send back: bound to this browser's cookie and to its session."""
    return _mac("csrf", _browser_id(request), request.cookies.get(COOKIE) or "")


def csrf_ok(request: Request, sent: str | None) -> bool:
    """A form's CSRF field is valid: this browser has its cookie and the field is its HMAC."""
    bid = request.cookies.get(CSRF_COOKIE)
    if not sent or not bid:
        return False
    expected = _mac("csrf", bid, request.cookies.get(COOKIE) or "")
    return hmac.compare_digest(sent.encode(), expected.encode())


def _set(response: Response, request: Request, name: str, value: str) -> None:
    response.set_cookie(
        name, value, httponly=True, samesite="strict", secure=is_https(request), path="/"
    )


def set_cookies(response: Response, request: Request) -> None:
    """Set the CSRF cookie a page's forms were bound to, when the browser had none."""
    if (bid := getattr(request.state, "new_browser_id", None)) is not None:
        _set(response, request, CSRF_COOKIE, bid)


def log_in(response: Response, request: Request, token: str) -> None:
    _set(response, request, COOKIE, session_value(token))


def log_out(response: Response, request: Request) -> None:
    response.delete_cookie(
        COOKIE, path="/", secure=is_https(request), httponly=True, samesite="strict"
    )
