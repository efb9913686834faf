"""Fixtures: the real server (`harness serve` subprocess, SQLite) with bearer tokens configured, filled
with real runs of the scripted agents, and Debian's chromium driven by playwright."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support import HOSTED, require
from support.trust_helpers import ROOT, HarnessServer
from support.web_helpers import AUTH, CHROMIUM, TOKEN


class WebServer(HarnessServer):
    """The API tests' `harness serve` (tests/harness/api) (target services in-process: the sandbox has its own
    tests; agents still run in their bwrap agent hosts and agent code in the scoring sandbox),
    with tokens, scoring and the web test agents."""

    def __init__(self, tmp: Path) -> None:
        super().__init__(
            tmp,
            env={
                "HARNESS_API_TOKENS": TOKEN,
                "HARNESS_SCORE_HOOK": "default",
                "HARNESS_API_ALLOW_DOTTED_AGENTS": "1",  # web_agents:SlowNumericAgent
                "PYTHONPATH": os.pathsep.join(
                    [str(HOSTED), str(ROOT), os.environ.get("PYTHONPATH", "")]
                ),
            },
        )
        self.db = tmp / "harness.db"  # HARNESS_HOME's store
        self.start(timeout=90)
        self.api = httpx.Client(base_url=self.url, timeout=60)

    def start_run(self, **spec: object) -> dict:
        r = self.api.post("/runs", json=spec, headers=AUTH)
        assert r.status_code == 201, r.text
        return r.json()

    def wait_run(self, run_id: str, timeout: float = 300) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            d = self.api.get(f"/runs/{run_id}").json()
            if d["status"] in ("completed", "failed", "cancelled"):
                return d
            time.sleep(0.3)
        raise AssertionError(f"run {run_id} did not end: {self.log()[-3000:]}")

    def stop(self) -> None:
        self.api.close()
        super().stop()


@pytest.fixture(scope="package")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    srv = WebServer(tmp_path_factory.mktemp("web"))
    yield srv
    srv.stop()


@pytest.fixture(scope="package")
def filled(server: WebServer) -> dict[str, dict]:
    """Real runs of the scripted agents, finished: numeric (with its interpolation floor) and
    strings."""
    runs = {
        "numeric": server.start_run(
            agent="scripted-numeric", dataset="find-gen", family="numeric", limit=2, seed=0
        ),
        "strings": server.start_run(
            agent="scripted-strings", dataset="find-gen", family="strings", limit=2, seed=0
        ),
    }
    out = {k: server.wait_run(r["id"]) for k, r in runs.items()}
    assert out["numeric"]["floor_run_id"], "a numeric run has an interpolation floor run"
    out["floor"] = server.wait_run(out["numeric"]["floor_run_id"])
    for k, d in out.items():
        assert d["status"] == "completed", (k, d)
    return out


# Module scope, not package: while playwright's sync API is open it holds an event loop as this
# thread's running loop, so every later test that calls asyncio.run (outside this folder too: a
# folder without __init__.py gives "package" fixtures the whole session) would fail.
@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    require(
        Path(CHROMIUM).exists() and shutil.which(CHROMIUM) is not None,
        f"Debian chromium not found at {CHROMIUM}",
        "HARNESS_TEST_SKIP_BROWSER",
    )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        # --no-sandbox: chromium's own sandbox needs user namespaces it cannot get as root here
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser):  # type: ignore[no-untyped-def]
    """A fresh browser context (no cookies: not logged in)."""
    ctx = browser.new_context(viewport={"width": 1300, "height": 900})
    pg = ctx.new_page()
    pg.set_default_timeout(60_000)
    yield pg
    ctx.close()
