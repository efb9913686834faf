"""Hostile callers against sessions, runs and tokens (issue 38 items 12, 13), on the suite's
server: a stolen session cookie replayed after its owner logged out; a second API token
cancelling the first token's run; guessing tokens at the login form, the bearer header and the
MCP endpoint. Each client guesses from a loopback address of its own, so the suite's other
callers (127.0.0.1) keep their budget, and no answer carries a canary."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from support.battery import AdvServer
from support.canary import Canaries, assert_clean

SESSION = "harness_session"
MAX_FAILURES = 20  # HARNESS_AUTH_MAX_FAILURES's default: the suite's server sets none
# an external agent's run waits for its MCP client: live until cancelled, costing nothing
WAITING = {"agent": "external", "protocol": {"mode": "tools"}, "dataset": "find-gen",
           "family": "numeric", "limit": 1, "seed": 0, "floor": False}  # fmt: skip


class Clients(dict):
    """Cookie-keeping clients by source address, made on first use."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url

    def __missing__(self, source: str) -> httpx.Client:
        transport = httpx.HTTPTransport(local_address=source)
        self[source] = c = httpx.Client(base_url=self.url, transport=transport,
                                        follow_redirects=False, timeout=60)  # fmt: skip
        return c


@pytest.fixture
def clients(adv_server: AdvServer) -> Iterator[Clients]:
    made = Clients(adv_server.url)
    yield made
    for c in made.values():
        c.close()


def checked(canaries: Canaries, r: httpx.Response) -> httpx.Response:
    what = f"{r.request.method} {r.request.url.path} ({r.status_code})"
    assert r.status_code < 500, f"{what}: {r.text[:500]}"
    assert_clean(canaries, f"{what} headers", repr(r.headers.multi_items()))
    assert_clean(canaries, f"{what} body", r.content)
    return r


def csrf(c: httpx.Client, canaries: Canaries) -> str:
    m = re.search(r'name="csrf" value="([^"]+)"', checked(canaries, c.get("/ui/login")).text)
    assert m, "the login page has no CSRF field"
    return m.group(1)


def log_in(c: httpx.Client, canaries: Canaries, token: str) -> httpx.Response:
    return checked(canaries, c.post("/ui/login", data={"token": token, "csrf": csrf(c, canaries)}))


def test_a_stolen_cookie_replayed_after_logout_is_no_session(
    clients: Clients, canaries: Canaries
) -> None:
    victim, thief = clients["127.0.0.1"], clients["127.0.0.6"]
    assert log_in(victim, canaries, canaries.token).status_code == 303
    stolen = victim.cookies[SESSION]
    assert log_in(clients["127.0.0.7"], canaries, canaries.token).status_code == 303
    assert clients["127.0.0.7"].cookies[SESSION] != stolen  # every login: a new random session
    r = checked(canaries, victim.post("/ui/logout", data={"csrf": csrf(victim, canaries)}))
    assert r.status_code == 303
    thief.cookies.set(SESSION, stolen)
    assert 'action="/ui/logout"' not in checked(canaries, thief.get("/ui/login")).text
    # the run form with the replayed cookie (and the CSRF field its page hands out) starts nothing
    r = thief.post("/ui/runs", data={**WAITING, "csrf": csrf(thief, canaries)})
    assert checked(canaries, r).status_code == 401 and "log in first" in r.text


def test_another_token_cannot_cancel_a_run(
    adv_server: AdvServer, second_token: str, canaries: Canaries
) -> None:
    api = adv_server.api
    admin = {"Authorization": f"Bearer {canaries.values['HARNESS_ADMIN_TOKENS']}"}
    other = {"Authorization": f"Bearer {second_token}"}
    runs = [adv_server.post_spec(WAITING)["id"] for _ in range(2)]  # the canary token's
    for rid in runs:
        r = checked(canaries, api.post(f"/runs/{rid}/cancel", headers=other))
        assert r.status_code == 403 and "not started with this API token" in r.text
        assert api.get(f"/runs/{rid}").json()["status"] != "cancelled"
    r = checked(canaries, api.post(f"/runs/{runs[0]}/cancel", headers=adv_server.auth))
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    r = checked(canaries, api.post(f"/runs/{runs[1]}/cancel", headers=admin))
    assert r.status_code == 200 and r.json()["status"] == "cancelled"


def test_token_guesses_are_answered_429_past_the_budget(
    adv_server: AdvServer, clients: Clients, canaries: Canaries
) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}

    def login_guess(c: httpx.Client, token: str) -> httpx.Response:
        return log_in(c, canaries, token)

    def bearer_guess(c: httpx.Client, token: str) -> httpx.Response:
        return c.post("/runs/x/cancel", headers={"Authorization": f"Bearer {token}"})

    def mcp_guess(c: httpx.Client, token: str) -> httpx.Response:
        return c.post("/mcp/x", json=ping, headers={"Authorization": f"Bearer {token}"})

    for source, guess in (("127.0.0.8", login_guess), ("127.0.0.9", bearer_guess),
                          ("127.0.0.10", mcp_guess)):  # fmt: skip
        c = clients[source]
        for i in range(MAX_FAILURES):
            assert checked(canaries, guess(c, f"guess-{i}")).status_code == 401, guess
        r = checked(canaries, guess(c, "guess-next"))
        assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1, (guess, r.text)
        # the right token from there is refused unread: the answer tells nothing of a guess
        assert checked(canaries, guess(c, canaries.token)).status_code == 429
    # the operator, from another address, is not locked out
    assert log_in(clients["127.0.0.1"], canaries, canaries.token).status_code == 303
    r = checked(canaries, adv_server.api.post("/runs/x/cancel", headers=adv_server.auth))
    assert r.status_code == 404


def test_wrong_mcp_tokens_lock_out_no_other_credential(
    adv_server: AdvServer, clients: Clients, canaries: Canaries
) -> None:
    """Issue 49 item 3: 20 wrong MCP tokens from the external agent's address made the operator's
    API token, the web login and another episode's MCP token all answer 429 from there. Budgets
    are per credential kind, and per live episode for MCP."""
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    c = clients["127.0.0.11"]

    def mcp(path: str, token: str) -> httpx.Response:
        return checked(
            canaries, c.post(path, json=ping, headers={"Authorization": f"Bearer {token}"})
        )

    runs = [adv_server.post_spec(WAITING) for _ in range(2)]
    (a,), (b,) = (r["mcp_endpoints"] for r in runs)
    path_a, path_b = (httpx.URL(e["url"]).path for e in (a, b))
    for i in range(MAX_FAILURES):
        assert mcp(path_a, f"guess-{i}").status_code == 401
    assert mcp(path_a, "guess-next").status_code == 429
    assert mcp(path_a, a["token"]).status_code == 429  # within one budget the right one too
    # from the same address: another episode's MCP client, the API token, the login
    assert mcp(path_b, b["token"]).status_code not in (401, 429)
    r = checked(canaries, c.post("/runs/x/cancel", headers=adv_server.auth))
    assert r.status_code == 404, r.text
    assert log_in(c, canaries, canaries.token).status_code == 303
    # paths of no live episode share one budget: inventing episodes buys no more guesses
    for i in range(MAX_FAILURES):
        assert mcp(f"/mcp/made-up-{i}", f"guess-{i}").status_code == 401
    assert mcp("/mcp/made-up-last", "guess-last").status_code == 429
    for run in runs:
        r = adv_server.api.post(f"/runs/{run['id']}/cancel", headers=adv_server.auth)
        assert r.status_code == 200
