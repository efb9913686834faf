"""Web sessions (issue 38 item 12) and the login's failure budget (item 13), against the web
tests' real server: a session is a random id the server holds, new at every login; it ends at
logout (a copy of the cookie replayed later is no session) and after the operator's idle time
(the table on its own, with its clock injected: no test sleeps for it). Wrong tokens typed into
the login form count against the client address's budget: past it the form answers 429, the
right token included, while other addresses log in as before."""

from __future__ import annotations

import re

import httpx
from support.web_helpers import TOKEN

from interp_harness.harness.web.sessions import SessionTable

SESSION = "harness_session"
DEFAULT_MAX_FAILURES = 20  # HARNESS_AUTH_MAX_FAILURES's default (the web server sets none)


def browser(url: str, source: str = "127.0.0.1") -> httpx.Client:
    """A cookie-keeping client from `source` (a loopback address: its own failure budget)."""
    transport = httpx.HTTPTransport(local_address=source)
    return httpx.Client(base_url=url, transport=transport, follow_redirects=False, timeout=30)


def csrf(c: httpx.Client) -> str:
    m = re.search(r'name="csrf" value="([^"]+)"', c.get("/ui/login").text)
    assert m, "the page has no CSRF field"
    return m.group(1)


def log_in(c: httpx.Client, token: str = TOKEN) -> httpx.Response:
    return c.post("/ui/login", data={"token": token, "csrf": csrf(c)})


def logged_in(url: str, session: str) -> bool:
    """Whether a page served with this session cookie alone is a logged-in page."""
    with httpx.Client(base_url=url, cookies={SESSION: session}, timeout=30) as c:
        return 'action="/ui/logout"' in c.get("/ui/login").text


def test_a_cookie_replayed_after_logout_is_no_session(server) -> None:  # type: ignore[no-untyped-def]
    with browser(server.url) as c:
        assert log_in(c).status_code == 303
        stolen = c.cookies[SESSION]
        assert logged_in(server.url, stolen)
        r = c.post("/ui/logout", data={"csrf": csrf(c)})
        assert r.status_code == 303
        assert not logged_in(server.url, stolen)


def test_every_login_is_a_new_session(server) -> None:  # type: ignore[no-untyped-def]
    with browser(server.url) as one, browser(server.url) as two:
        assert log_in(one).status_code == 303 and log_in(two).status_code == 303
        first, second = one.cookies[SESSION], two.cookies[SESSION]
        assert first != second and TOKEN not in first + second
        assert log_in(one).status_code == 303  # again in the same browser: a new session
        assert one.cookies[SESSION] != first and not logged_in(server.url, first)
        # logging one out leaves the other
        assert one.post("/ui/logout", data={"csrf": csrf(one)}).status_code == 303
        assert logged_in(server.url, second)


def test_a_session_ends_after_the_idle_time() -> None:
    now = [0.0]
    table = SessionTable(idle_s=60, clock=lambda: now[0])
    kept, idle = table.open("t1"), table.open("t2")
    assert kept != idle
    now[0] = 50
    assert table.token(kept) == "t1"  # a use: its idle time starts again
    now[0] = 100
    assert table.token(kept) == "t1"
    assert table.token(idle) is None  # 100 s without a request
    now[0] = 161
    assert table.token(kept) is None
    table.open("t3")
    assert len(table) == 1  # ended sessions are dropped


def test_wrong_logins_past_the_budget_are_429(server) -> None:  # type: ignore[no-untyped-def]
    with browser(server.url, "127.0.0.4") as guesser:
        for i in range(DEFAULT_MAX_FAILURES):
            assert log_in(guesser, f"guess-{i}").status_code == 401
        r = log_in(guesser, "guess-next")
        assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
        assert "too many failed token attempts" in r.text
        # the right token is refused there too (a 429 tells nothing), no session is opened
        r = log_in(guesser, TOKEN)
        assert r.status_code == 429 and SESSION not in r.cookies
    with browser(server.url) as operator:  # another address logs in as before
        assert log_in(operator).status_code == 303
