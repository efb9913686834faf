"""Anonymous loops of requests for an episode's plot (issue 49, item 10). `plot.svg` loaded the
episode and built its detail on the server's event loop (~50 ms a request, cached or not): 30
anonymous loops for 15 s took a token holder's run from 1.6 s to 10.9 s and `/healthz` to 2.7 s.
Now the work runs off the loop, and callers without a token share the operator's few slots
(HARNESS_WEB_ANON_ASSET_SLOTS, 2 by default; 1 per address): past them, 503 with Retry-After.
A logged-in token holder is never gated."""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.trust_helpers import HarnessServer

TOKEN = "plot-flood-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
LOOPS, SECONDS = 12, 6


@pytest.fixture(scope="module")
def plotted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A server with tokens, and a scored numeric episode: (server URL, plot path)."""
    srv = HarnessServer(
        tmp_path_factory.mktemp("plot-flood"),
        env={"HARNESS_API_TOKENS": TOKEN, "HARNESS_SCORE_HOOK": "default"},
    )
    srv.start(timeout=90)
    try:
        spec = {"agent": "scripted-numeric", "dataset": "find-gen", "family": "numeric",
                "limit": 1, "seed": 0, "floor": False}  # fmt: skip
        ep = srv.one_episode_run(spec, AUTH)
        yield srv.url, f"/ui/episodes/{ep['id']}/plot.svg"
    finally:
        srv.stop()


def logged_in(url: str) -> httpx.Client:
    c = httpx.Client(base_url=url, timeout=60, follow_redirects=False)
    m = re.search(r'name="csrf" value="([^"]+)"', c.get("/ui/login").text)
    assert m
    assert c.post("/ui/login", data={"token": TOKEN, "csrf": m.group(1)}).status_code == 303
    return c


def test_anonymous_plot_loops_are_bounded_and_leave_others_served(
    plotted: tuple[str, str], tmp_path: Path
) -> None:
    url, plot = plotted
    assert (
        httpx.get(url + plot, timeout=60).status_code == 200
    )  # alone, an anonymous caller is served
    statuses: Counter[int] = Counter()
    stop = time.monotonic() + SECONDS

    def loop() -> None:
        with httpx.Client(base_url=url, timeout=60) as c:
            while time.monotonic() < stop:
                r = c.get(plot)
                statuses[r.status_code] += 1
                if r.status_code == 503:
                    assert r.headers["retry-after"] == "1" and "busy" in r.text

    threads = [threading.Thread(target=loop) for _ in range(LOOPS)]
    for t in threads:
        t.start()
    holder, health = logged_in(url), []
    try:
        while time.monotonic() < stop:
            r = holder.get(plot)
            assert r.status_code == 200 and r.content.startswith(b"<svg"), r.status_code
            t0 = time.monotonic()
            assert httpx.get(url + "/healthz", timeout=60).status_code == 200
            health.append(time.monotonic() - t0)
    finally:
        for t in threads:
            t.join()
        holder.close()
    assert set(statuses) <= {200, 503} and statuses[503] > 0, statuses
    # the loop stays free for everyone else: a health check is answered within a second
    assert max(health) < 1.0, health
