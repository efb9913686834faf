"""Hostile API callers against the canary server after the battery: every route of the app
(enumerated from the FastAPI app object, so a new route is covered without an entry here),
anonymously and as a logged-in token holder, with real and unknown ids, then with NUL bytes and
lone surrogates in paths, queries and bodies, then schemathesis over the OpenAPI document. No
response is a 5xx, and no body or header carries a canary.

(Schemathesis with POST bodies as an authorised caller is tests/harness/api/test_api_fuzz.py's job;
here mutating operations are fuzzed anonymously only, so that fuzzed runs do not start on the
suite's shared server.)"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from support import fuzz_settings
from support.battery import TERMINAL, AdvServer, Battery
from support.canary import Canaries, assert_clean

EXAMPLES = 10  # per operation and caller: bounded so that CI stays quick
UNKNOWN = "no-such-id"
# a NUL byte, a lone surrogate (its UTF-8-style bytes, which are not valid UTF-8), and both in
# JSON string escapes
HOSTILE_URL_VALUES = ("a%00b", "%ED%A0%80", "%00")
HOSTILE_JSON = ('"a\\u0000b"', '"\\ud800"', '"\\udfff\\u0000"')


def _walk(routes: list[Any], prefix: str = "") -> list[tuple[str, str, list[str]]]:
    """Routes, recursing into included routers (FastAPI >= 0.165 keeps an included router as one
    `_IncludedRouter` entry) and mounts."""
    from fastapi.routing import APIRoute

    out = []
    for r in routes:
        inner = getattr(r, "original_router", None)
        if inner is not None:
            ctx = getattr(r, "include_context", None)
            out += _walk(inner.routes, prefix + (getattr(ctx, "prefix", "") or ""))
            continue
        if getattr(r, "methods", None) is None and getattr(r, "routes", None):
            out += _walk(r.routes, prefix + getattr(r, "path", ""))
            continue
        methods = sorted(set(getattr(r, "methods", None) or ()) - {"HEAD", "OPTIONS"})
        query = [p.name for p in r.dependant.query_params] if isinstance(r, APIRoute) else []
        out += [(m, prefix + r.path, query) for m in methods]
    return out


def app_routes() -> list[tuple[str, str, list[str]]]:
    """(method, path template, query parameter names) of every route the app serves."""
    from interp_harness.harness.api.app import create_app

    return _walk(create_app(run_scheduler=False).routes)


ROUTES = app_routes()
ROUTE_IDS = [f"{m} {p}" for m, p, _ in ROUTES]


def test_every_documented_route_is_enumerated() -> None:
    """The enumeration above misses nothing the OpenAPI document lists (so a new route is in the
    battery without an entry), and it reaches the web UI's routes."""
    from interp_harness.harness.api.app import create_app

    documented = {
        (m.upper(), p)
        for p, ops in create_app(run_scheduler=False).openapi()["paths"].items()
        for m in ops
    }
    assert documented <= {(m, p) for m, p, _ in ROUTES}
    assert ("GET", "/ui/episodes/{episode_id}") in {(m, p) for m, p, _ in ROUTES}


def check(canaries: Canaries, r: httpx.Response, what: str) -> None:
    assert r.status_code < 500, f"{what} -> {r.status_code}: {r.text[:500]}"
    assert_clean(canaries, f"{what} ({r.status_code}) headers", repr(r.headers.multi_items()))
    assert_clean(canaries, f"{what} ({r.status_code}) body", r.content)


def login(server: AdvServer, canaries: Canaries) -> httpx.Response:
    """POST /ui/login with the token, sending back any hidden form field of the login page
    (a CSRF token); returns the response (its Set-Cookie is the session). A browser that has
    not been here before: `server.api`'s cookie jar holds whatever earlier tests' pages set (a
    shuffled run met a CSRF cookie there, so the login page set none and the form was refused)."""
    with httpx.Client(base_url=server.url, timeout=120) as fresh:
        form = fresh.get("/ui/login")
        fields = dict(re.findall(r'<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"',
                                 form.text))  # fmt: skip
        return fresh.post(
            "/ui/login",
            data={**fields, "token": canaries.token},
            headers={"Cookie": _cookie_header(form.cookies)},
            follow_redirects=False,
        )


def _cookie_header(cookies: httpx.Cookies) -> str:
    return "; ".join(f"{k}={v}" for k, v in cookies.items())


@pytest.fixture(scope="module")
def callers(adv_server: AdvServer, canaries: Canaries) -> dict[str, dict[str, Any]]:
    """Request arguments of each kind of caller: anonymous, and a token holder (bearer header
    and the web session's cookie)."""
    r = login(adv_server, canaries)  # checked by test_login_hands_out_no_secret
    return {
        "anonymous": {},
        # the session cookie as a header: httpx deprecates per-request cookies
        "token": {"headers": {**adv_server.auth, "Cookie": _cookie_header(r.cookies)}},
    }


def test_login_hands_out_no_secret(adv_server: AdvServer, canaries: Canaries) -> None:
    r = login(adv_server, canaries)
    assert r.status_code in (302, 303), r.text[:500]
    check(canaries, r, "POST /ui/login with the token (issue 27 item 15: not the raw token)")


# Values to try for path parameters that name no id of the battery (guesses: a 404 is fine).
GUESSES = {"step": ["0", "1", "2"]}
_PARAM = r"{(\w+)(?::\w+)?}"


def _fillings(path: str, method: str, battery: Battery) -> list[tuple[str, bool]]:
    """(the path with its parameters set, whether all are real ids of the battery). Each
    parameter in turn takes each of its real values, its guesses and an unknown id, the others
    their first real value. Mutating requests only name runs that have ended (a hanging run's
    test owns its fate)."""
    import interp_harness.harness.web
    from interp_harness.function_store.benchmark import benchmarks, load_ref

    runs = battery.run_ids()
    if method != "GET":
        runs = [r for r in runs if battery.done.get(r, {}).get("status") in TERMINAL]
    static = Path(interp_harness.harness.web.__file__).parent / "static"
    real = {
        "run_id": runs,
        "episode_id": battery.episode_ids(),
        "name": sorted(p.name for p in static.iterdir()),
        # every registered benchmark's panels (a panel without an asset answers 404, by design)
        "panel": sorted({load_ref(r).name for b in benchmarks() for r in b.panels}),
    }
    names = re.findall(_PARAM, path)
    if not names:
        return [(path, True)]
    first = {n: ([*real.get(n, []), *GUESSES.get(n, []), UNKNOWN])[0] for n in names}
    out = []
    for name in names:
        for v in [*real.get(name, []), *GUESSES.get(name, []), UNKNOWN]:
            values = {**first, name: v}
            url = re.sub(_PARAM, lambda m: values[m.group(1)], path)  # noqa: B023
            out.append((url, all(values[n] in real.get(n, []) for n in names)))
    return list(dict.fromkeys(out))


_QUERY = {"/targets": {"dataset": "find-v1", "limit": 5}, "/runs/{run_id}/events": {}}


def _query(path: str, run_id: str | None, battery: Battery) -> dict[str, Any]:
    q = dict(_QUERY.get(path, {}))
    if path == "/ui/compare":
        q["a"], q["b"] = battery.run_ids()[:2]
    if path.endswith("/events") and run_id not in battery.done:
        q["stream"] = "false"  # a run that has not ended streams for as long as it runs
    return q


@pytest.mark.parametrize(("method", "path", "query"), ROUTES, ids=ROUTE_IDS)
def test_every_route_every_caller(
    method: str,
    path: str,
    query: list[str],
    battery: Battery,
    callers: dict[str, dict[str, Any]],
    canaries: Canaries,
) -> None:
    api = battery.server.api
    served, tried = 0, 0  # GET requests naming real ids, and those answered 200
    for url, real in _fillings(path, method, battery):
        m = re.search(r"/runs/([^/]+)", url)
        params = _query(path, m.group(1) if m else None, battery)
        for who, kw in callers.items():
            body = {"json": {}} if method in ("POST", "PUT", "PATCH") else {}
            r = api.request(method, url, params=params, follow_redirects=False, **body, **kw)
            check(canaries, r, f"{who} {method} {url}")
            if method == "GET" and real:
                tried += 1
                served += r.status_code == 200
    # the checks above read real content (not only 404s): some real id was served
    assert served or not tried, f"{method} {path}: none of {tried} requests for real ids got 200"


@pytest.mark.parametrize(("method", "path", "query"), ROUTES, ids=ROUTE_IDS)
def test_nul_and_lone_surrogates(
    method: str,
    path: str,
    query: list[str],
    battery: Battery,
    callers: dict[str, dict[str, Any]],
    canaries: Canaries,
) -> None:
    """In every path parameter, every query parameter and (for bodies) every JSON string of a
    run request; issue 27 items 7 (NUL on PostgreSQL) and 11 (lone surrogates)."""
    base = battery.server.url
    urls = []
    for v in HOSTILE_URL_VALUES:
        if "{" in path:
            urls.append(re.sub(_PARAM, v, path))
        for name in query or ["q"]:
            urls.append(re.sub(_PARAM, UNKNOWN, path) + f"?{name}={v}&stream=false")
    for who, kw in callers.items():
        with httpx.Client(base_url=base, timeout=120) as c:
            for url in urls:
                # a pre-encoded URL: httpx sends it as it is
                r = c.request(method, httpx.URL(base + url), headers=kw.get("headers"))
                check(canaries, r, f"{who} {method} {url}")
            if method != "POST":
                continue
            for s in HOSTILE_JSON:
                for body in (
                    f'{{"agent": {s}, "dataset": "find-v1", "ids": ["{UNKNOWN}"]}}',
                    f'{{"agent": "scripted-numeric", "dataset": {s}, "ids": [{s}]}}',
                    f'{{"agent": "scripted-numeric", "dataset": "find-v1", "ids": [{s}],'
                    f' "family": {s}, "floor": false}}',
                ):
                    u = re.sub(_PARAM, UNKNOWN, path)
                    r = c.post(u, content=body.encode(), headers={
                        **(kw.get("headers") or {}), "content-type": "application/json"})  # fmt: skip
                    check(canaries, r, f"{who} POST {u} {body}")
                    r = c.post(u, content=b"token=" + body.encode() + b"\x00\xed\xa0\x80",
                               headers={**(kw.get("headers") or {}),
                                        "content-type": "application/x-www-form-urlencoded"})  # fmt: skip
                    check(canaries, r, f"{who} POST form {u} {body}")


@pytest.fixture(scope="module")
def adv_schema(adv_server: AdvServer):  # type: ignore[no-untyped-def]
    return schemathesis.openapi.from_url(adv_server.url + "/openapi.json")


schema = schemathesis.pytest.from_fixture("adv_schema")


@schema.parametrize()
@fuzz_settings(EXAMPLES)
def test_schemathesis(case, adv_server: AdvServer, canaries: Canaries, battery: Battery) -> None:  # type: ignore[no-untyped-def]
    who = {"anonymous": {}}
    if case.method == "GET":  # see the module's docstring
        who["token"] = adv_server.auth
    for name, headers in who.items():
        r = case.call(headers=headers, timeout=60)
        what = f"{name} {case.method} {case.formatted_path}"
        assert r.status_code < 500, f"{what} -> {r.status_code}: {r.text[:500]}"
        assert_clean(canaries, f"{what} headers", repr(list(r.headers.items())))
        assert_clean(canaries, f"{what} body", r.content)
