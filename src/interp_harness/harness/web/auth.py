"""Who is looking at a page: an authorised viewer may see ground truth of finished episodes.

With no bearer tokens configured (HARNESS_API_TOKENS empty: local use) everyone is authorised, as
everyone may also start runs over the API. With tokens, a browser logs in once with one of them
(the login form) and gets a session cookie: a random id of a session the server holds in memory
(interp_harness.harness.web.sessions), new at every login, never derived from the token. A session ends at
logout, after HARNESS_WEB_SESSION_IDLE_S without a request, when its token is removed from the
configuration (checked on every request) and when the server restarts. Failed logins count
against the client address's failure budget (interp_harness.harness.rate_limit: 429 past it). Cookies are
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
import threading

from fastapi import Request
from starlette.responses import Response

from interp_harness.harness.rate_limit import LOGIN, FailureBudget, client_address
from interp_harness.harness.web.sessions import SessionTable

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


_TABLE_LOCK = threading.Lock()


def sessions(request: Request) -> SessionTable:
    """The app's session table (made on first use, with the operator's idle time)."""
    state = request.app.state
    table = getattr(state, "web_sessions", None)
    if table is None:
        with _TABLE_LOCK:
            table = getattr(state, "web_sessions", None)
            if table is None:
                idle = state.services.settings.web_session_idle_s
                table = state.web_sessions = SessionTable(idle)
    return table


def session_token(request: Request) -> str | None:
    """The token of the open session the cookie names, while it is still configured; else None."""
    session_id = request.cookies.get(COOKIE) or ""
    token = sessions(request).token(session_id)
    if token is None:
        return None
    if not valid_token(request, token):  # removed from the configuration: the session ends
        sessions(request).close(session_id)
        return None
    return token


def failures(request: Request) -> FailureBudget:
    """The server's budget of failed token attempts per client address (interp_harness.harness.rate_limit)."""
    return request.app.state.api.failures


def check_login_budget(request: Request) -> None:
    """Raise TooManyFailures when this client may not try a token now."""
    failures(request).check(client_address(request.client), LOGIN)


def login_failed(request: Request) -> None:
    failures(request).failed(client_address(request.client), LOGIN)


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
    """Open a new session for `token` (ending the one this browser had) and set its cookie."""
    if old := request.cookies.get(COOKIE):
        sessions(request).close(old)
    _set(response, request, COOKIE, sessions(request).open(token))


def log_out(response: Response, request: Request) -> None:
    """End this browser's session on the server (a copy of its cookie is void) and drop it."""
    if session_id := request.cookies.get(COOKIE):
        sessions(request).close(session_id)
    response.delete_cookie(
        COOKIE, path="/", secure=is_https(request), httponly=True, samesite="strict"
    )
