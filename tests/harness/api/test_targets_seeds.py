"""`GET /targets?gen_seed=N` (issue 27, item 10): building a find-gen catalog for a new seed costs
seconds of CPU. With tokens configured, an anonymous caller gets 401 for a seed the server has not
loaded (no CPU spent), the server's own seed and seeds already loaded stay open and cheap, and
new seeds are built one at a time (503 with Retry-After for the others)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx

TOKEN = "seed-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (/proc/PID/stat, clock ticks)."""
    import os

    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_new_seeds_need_a_token_and_are_built_one_at_a_time(start_server) -> None:  # type: ignore[no-untyped-def]
    srv = start_server({"HARNESS_API_TOKENS": TOKEN})
    url = srv.url + "/targets"
    base = {"dataset": "find-gen", "family": "numeric", "limit": 5}
    r = httpx.get(url, params={**base, "gen_seed": 0}, timeout=120)  # the server's own seed
    assert r.status_code == 200 and len(r.json()) == 5, r.text
    cpu0 = _cpu_s(srv.proc.pid)  # what answering from a loaded seed costs, to compare with
    assert httpx.get(url, params={**base, "gen_seed": 0}, timeout=120).status_code == 200
    answer = _cpu_s(srv.proc.pid) - cpu0

    cpu0 = _cpu_s(srv.proc.pid)
    for seed in range(1001, 1006):
        r = httpx.get(url, params={**base, "gen_seed": seed}, timeout=120)
        assert r.status_code == 401, (seed, r.status_code, r.text[:200])
        assert "needs a bearer token" in r.json()["detail"]
    spent = _cpu_s(srv.proc.pid) - cpu0
    assert spent < 1.0, f"five refused new seeds cost {spent:.2f} s of server CPU"

    cpu0 = _cpu_s(srv.proc.pid)
    r = httpx.get(url, params={**base, "gen_seed": 1001}, headers=AUTH, timeout=120)
    assert r.status_code == 200 and len(r.json()) == 5, r.text
    built = _cpu_s(srv.proc.pid) - cpu0
    ids = [t["id"] for t in r.json()]
    # now loaded: open to everyone, and cheap (the server's CPU: not built again)
    cpu0 = _cpu_s(srv.proc.pid)
    again = httpx.get(url, params={**base, "gen_seed": 1001}, timeout=120)
    assert again.status_code == 200 and [t["id"] for t in again.json()] == ids
    # (plus the cost of any answer from a loaded seed, and two ticks of the kernel's CPU clock)
    assert _cpu_s(srv.proc.pid) - cpu0 <= answer + built / 4 + 0.02, (built, answer)

    # several new seeds at once, with a token: one is built, the others are told to retry
    def get(seed: int) -> httpx.Response:
        return httpx.get(url, params={**base, "gen_seed": seed}, headers=AUTH, timeout=120)

    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(get, range(2001, 2005)))
    codes = sorted(r.status_code for r in got)
    assert 200 in codes and 503 in codes and set(codes) <= {200, 503}, codes
    assert all(r.headers.get("retry-after") for r in got if r.status_code == 503)
    assert "Traceback" not in srv.log()
