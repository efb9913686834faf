"""Run ownership and wrong-token budgets (issue 38 item 13), against the real server with three
tokens: A and B (HARNESS_API_TOKENS) and an admin (HARNESS_ADMIN_TOKENS). A run belongs to the
token that started it: another token's cancel is a 403, its own token's and the admin's work.
Wrong tokens (bearer, MCP) count per client address: past the budget they are answered 429, the
right token too from that address, while other addresses and requests without a token are
served as before."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.trust_helpers import HarnessServer

A, B, ADMIN = "owner-a-token-0123456789", "owner-b-token-0123456789", "admin-token-0123456789"
MAX_FAILURES = 3
# an external agent's run waits for its MCP client: it stays live, costing nothing, until cancelled
WAITING = {"agent": "external", "protocol": {"mode": "tools"}, "dataset": "find-gen",
           "family": "numeric", "limit": 1, "seed": 0, "floor": False}  # fmt: skip


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HarnessServer]:
    env = {
        "HARNESS_API_TOKENS": f"{A},{B}",
        "HARNESS_ADMIN_TOKENS": ADMIN,
        "HARNESS_AUTH_MAX_FAILURES": str(MAX_FAILURES),
    }
    s = HarnessServer(Path(tmp_path_factory.mktemp("owners")), env).start()
    yield s
    s.stop()


def client(srv: HarnessServer, source: str = "127.0.0.1") -> httpx.Client:
    """A client from `source` (a loopback address of its own: its own failure budget)."""
    transport = httpx.HTTPTransport(local_address=source)
    return httpx.Client(base_url=srv.url, transport=transport, timeout=60)


def start(c: httpx.Client, token: str) -> str:
    r = c.post("/runs", json=WAITING, headers=auth(token))
    assert r.status_code == 201, r.text
    return r.json()["id"]


def test_only_the_runs_token_or_an_admin_may_cancel_it(srv: HarnessServer) -> None:
    with client(srv) as c:
        first, second = start(c, A), start(c, A)
        r = c.post(f"/runs/{first}/cancel", headers=auth(B))
        assert r.status_code == 403, r.text
        assert "not started with this API token" in r.json()["detail"]
        assert c.get(f"/runs/{first}").json()["status"] != "cancelled"
        r = c.post(f"/runs/{first}/cancel", headers=auth(A))
        assert r.status_code == 200 and r.json()["status"] == "cancelled", r.text
        r = c.post(f"/runs/{second}/cancel", headers=auth(ADMIN))
        assert r.status_code == 200 and r.json()["status"] == "cancelled", r.text
        # B's own run is B's; the admin token is an API token too (it starts runs)
        own = start(c, B)
        assert c.post(f"/runs/{own}/cancel", headers=auth(A)).status_code == 403
        assert c.post(f"/runs/{own}/cancel", headers=auth(B)).status_code == 200
        assert c.post(f"/runs/{start(c, ADMIN)}/cancel", headers=auth(ADMIN)).status_code == 200


def test_wrong_bearer_tokens_past_the_budget_are_429(srv: HarnessServer) -> None:
    with client(srv, "127.0.0.2") as guesser, client(srv) as operator:
        for i in range(MAX_FAILURES):
            r = guesser.post("/runs/x/cancel", headers=auth(f"guess-{i}"))
            assert r.status_code == 401, r.text
        r = guesser.post("/runs/x/cancel", headers=auth("guess-next"))
        assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1, r.text
        assert "too many failed token attempts" in r.json()["detail"]
        # refused before the comparison: the right token from there tells nothing either
        assert guesser.post("/runs/x/cancel", headers=auth(A)).status_code == 429
        # requests without a token are no guesses, and another address keeps its budget
        assert guesser.get("/runs/x").status_code == 404
        assert guesser.post("/runs/x/cancel").status_code == 401
        assert operator.post("/runs/x/cancel", headers=auth(A)).status_code == 404


def test_mcp_token_guesses_past_the_budget_are_429(srv: HarnessServer) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    with client(srv, "127.0.0.3") as guesser:
        for i in range(MAX_FAILURES):
            r = guesser.post("/mcp/ep", json=body, headers=auth(f"guess-{i}"))
            assert r.status_code == 401, r.text
        r = guesser.post("/mcp/ep", json=body, headers=auth("guess-next"))
        assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1, r.text
        assert "too many failed token attempts" in r.json()["error"]
        assert guesser.post("/mcp/ep", json=body).status_code == 401  # no token: no guess
