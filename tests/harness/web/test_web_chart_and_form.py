"""The run page's "Score versus number of queries" chart puts its buckets in numeric order, the
run form starts with an agent that runs on this machine (no key, no model server), and a running
run's page shows the rounds and target calls of its running episodes: the real `harness serve`
over HTTP, read by Debian's chromium through playwright."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest
from support import HOSTED
from support.cli_store import ROOT, main_job_store  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[str]]]:
    """`harness serve` on a store holding the main job's runs; yields (base URL, run ids)."""
    home = tmp_path_factory.mktemp("web-chart")
    url = f"sqlite:///{home / 'harness.db'}"
    ids = main_job_store(url)
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "HARNESS_HOME": str(home),
        "HARNESS_SANDBOX": "inprocess",
        "HARNESS_POLL_INTERVAL_S": "0.1",
        # orch_agents:ProbeAgent (tests/harness/runs) for the running-episode test
        "HARNESS_API_ALLOW_DOTTED_AGENTS": "1",
        "PYTHONPATH": os.pathsep.join([str(HOSTED), str(ROOT)]),
    }
    env.pop("HARNESS_API_TOKENS", None)
    with open(home / "server.log", "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "interp_harness.harness.cli", "serve", "--port", str(port)],
            env=env,
            cwd=home,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, (home / "server.log").read_text()[-3000:]
            try:
                if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.2)
        yield base, ids
    finally:
        proc.terminate()
        proc.wait(30)


@pytest.fixture(scope="module")
def page(browser):  # type: ignore[no-untyped-def]
    """One page for this module's tests, from the one browser of tests/harness/web/conftest.py:
    a second sync_playwright in the same process would start a second event loop."""
    pg = browser.new_page()
    pg.set_default_timeout(60_000)
    yield pg
    pg.close()


def test_queries_chart_buckets_in_numeric_order(served, page) -> None:  # type: ignore[no-untyped-def]
    base, ids = served
    # the numeric run: its agent used 40 inputs (and 0 in the episode that ended in an error: in no
    # bin, for it says nothing about what 0 inputs achieve), its interpolation floor 129
    page.goto(f"{base}/ui/runs/{ids[0]}")
    svg = page.locator("#queries-plot svg").inner_html()
    # matplotlib draws tick labels as glyph paths, each after a comment with its text
    ticks = re.findall(r'<g id="xtick_\d+">.*?<!--\s*(.*?)\s*-->', svg, flags=re.S)
    assert ticks == ["17-64", "65-256"], ticks


def test_run_form_defaults_to_an_offline_agent(served, page) -> None:  # type: ignore[no-untyped-def]
    base, _ = served
    page.goto(base + "/")
    agent = page.locator("#r-agent").input_value()
    family = page.locator("#r-family").input_value()
    # the scripted numeric agent needs no key and no model server (agents/scripted_numeric.py),
    # and numeric targets need no service (function_store/numeric/benchmark.py)
    assert (agent, family) == ("scripted-numeric", "numeric")
    # and it runs here as it stands: the form submitted unchanged completes
    page.get_by_role("button", name="Start run").click()
    page.wait_for_url(re.compile(r".*/ui/runs/[0-9a-f]{16}$"))
    run_id = page.url.rsplit("/", 1)[1]
    deadline = time.monotonic() + 240
    while (status := httpx.get(f"{base}/runs/{run_id}").json()["status"]) not in (
        "completed",
        "failed",
        "cancelled",
    ):
        assert time.monotonic() < deadline, status
        time.sleep(0.5)
    detail = httpx.get(f"{base}/runs/{run_id}").json()
    assert status == "completed", detail
    assert detail["agent"] == "scripted-numeric" and not detail["errors_by_category"], detail


def test_run_page_shows_rounds_and_calls_of_running_episodes(served, page) -> None:  # type: ignore[no-untyped-def]
    base, _ = served
    spec = {
        "agent": "orch_agents:ProbeAgent",
        "agent_options": {"n_calls": 20, "delay": 0.5},
        "dataset": "find-gen",
        "family": "numeric",
        "limit": 1,
        "seed": 0,
        "floor": False,
    }
    r = httpx.post(base + "/runs", json=spec, timeout=60)
    assert r.status_code == 201, r.text
    run_id = r.json()["id"]
    # as served (no script): once the episode has made a call
    deadline = time.monotonic() + 120
    pattern = re.compile(r"1 running: rounds [1-9]\d*, target calls [1-9]")
    while not pattern.search(html := httpx.get(f"{base}/ui/runs/{run_id}").text):
        assert time.monotonic() < deadline, html[-2000:]
        time.sleep(0.3)
    # live: the page loaded now follows the episode's steps over server-sent events
    page.goto(f"{base}/ui/runs/{run_id}")
    first = page.locator('[data-field="running"]').text_content()
    start = int(re.search(r"rounds (\d+)", first or "").group(1))
    page.wait_for_function(
        """(start) => {
            const m = /rounds (\\d+), target calls (\\d+)/.exec(
                document.querySelector('[data-field="running"]').textContent);
            return m && +m[1] >= start + 2 && +m[2] >= start + 2;
        }""",
        arg=start,
        timeout=60_000,
    )
