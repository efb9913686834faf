"""The web login (issue 27, item 15), against the real server over HTTP: the session cookie is
not the API token (a one-way value the server checks against its tokens), login, logout and the
run form need this browser's CSRF field, and cookies are Secure when the page was served over
https, which X-Forwarded-Proto can say only when the operator trusts the proxy."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from support.trust_helpers import HarnessServer
from support.web_helpers import TOKEN

SESSION, CSRF = "harness_session", "harness_csrf"


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[..., HarnessServer]]:
    servers: list[HarnessServer] = []

    def make(**env: str) -> HarnessServer:
        s = HarnessServer(tmp_path / f"home{len(servers)}", {"HARNESS_API_TOKENS": TOKEN, **env})
        servers.append(s)
        return s.start()

    yield make
    for s in servers:
        s.stop()


def set_cookies(r: httpx.Response) -> dict[str, str]:
    """name -> the whole Set-Cookie header, for each cookie the response sets."""
    return {h.split("=", 1)[0]: h for h in r.headers.get_list("set-cookie")}


def csrf_field(html: str) -> str:
    m = re.search(r'name="csrf" value="([^"]+)"', html)
    assert m, "the page has no CSRF field"
    return m.group(1)


def logged_in(client: httpx.Client) -> bool:
    html = client.get("/ui/login").text
    return 'action="/ui/logout"' in html


def test_session_cookie_is_not_the_token_and_forms_need_csrf(start) -> None:  # type: ignore[no-untyped-def]
    srv = start()
    victim = httpx.Client(base_url=srv.url, follow_redirects=False, timeout=30)
    attacker = httpx.Client(base_url=srv.url, follow_redirects=False, timeout=30)

    # a login form posted from elsewhere (no CSRF field, or another browser's) is refused
    r = victim.post("/ui/login", data={"token": TOKEN})
    assert r.status_code == 403 and SESSION not in set_cookies(r)
    theirs = csrf_field(attacker.get("/ui/login").text)
    r = victim.post("/ui/login", data={"token": TOKEN, "csrf": theirs})
    assert r.status_code == 403 and SESSION not in set_cookies(r)
    assert not logged_in(victim)

    page = victim.get("/ui/login")
    cookies = set_cookies(page)
    assert CSRF not in cookies  # this browser got its CSRF cookie with its first page above
    r = victim.post("/ui/login", data={"token": TOKEN, "csrf": csrf_field(page.text)})
    assert r.status_code == 303, r.text[:300]
    header = set_cookies(r)[SESSION]
    value = victim.cookies[SESSION]
    assert TOKEN not in header and value and value != TOKEN
    assert "httponly" in header.lower() and "samesite=strict" in header.lower()
    assert "secure" not in header.lower()  # plain http, no trusted proxy
    assert logged_in(victim)

    # the raw token as a cookie (what the server used to set) is no session
    raw = httpx.Client(base_url=srv.url, cookies={SESSION: TOKEN, "harness_token": TOKEN})
    assert not logged_in(raw)

    # log out: refused without this browser's field, done with it
    r = victim.post("/ui/logout", data={"csrf": theirs})
    assert r.status_code == 403 and logged_in(victim)
    r = victim.post("/ui/logout", data={"csrf": csrf_field(victim.get("/").text)})
    assert r.status_code == 303 and logged_in(victim) is False
    # the run form too
    r = attacker.post("/ui/runs", data={"agent": "scripted-numeric", "dataset": "find-gen"})
    assert r.status_code == 403
    for c in (victim, attacker, raw):
        c.close()


def _login_via_proxy(srv: HarnessServer) -> str:
    """Log in as a browser behind an https proxy would; the session's Set-Cookie header."""
    https = {"X-Forwarded-Proto": "https"}
    with httpx.Client(base_url=srv.url, follow_redirects=False, timeout=30) as c:
        page = c.get("/ui/login", headers=https)
        csrf_cookie = set_cookies(page)[CSRF]
        bid = csrf_cookie.split(";", 1)[0].split("=", 1)[1]
        r = c.post(
            "/ui/login",
            data={"token": TOKEN, "csrf": csrf_field(page.text)},
            headers={**https, "Cookie": f"{CSRF}={bid}"},  # a Secure cookie: sent by hand
        )
        assert r.status_code == 303, r.text[:300]
        return csrf_cookie + "\n" + set_cookies(r)[SESSION]


@pytest.mark.slow
def test_cookies_are_secure_over_https_from_a_trusted_proxy_only(start) -> None:  # type: ignore[no-untyped-def]
    untrusted = _login_via_proxy(start())
    assert "secure" not in untrusted.lower()  # anyone can send X-Forwarded-Proto
    trusted = _login_via_proxy(start(HARNESS_TRUSTED_PROXIES="127.0.0.1"))
    assert all("; secure" in h.lower() for h in trusted.split("\n")), trusted
