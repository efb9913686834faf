"""Fixtures: the real server (uvicorn subprocess, SQLite) with bearer tokens configured, filled
with real runs of the scripted agents, and Debian's chromium driven by playwright."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from web_helpers import AUTH, CHROMIUM, TOKEN

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebServer:
    def __init__(self, tmp: Path) -> None:
        self.db = tmp / "harness.db"
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp / "server.log"
        env = dict(os.environ)
        env.update(
            {
                "DATABASE_URL": f"sqlite:///{self.db}",
                "HARNESS_API_TOKENS": TOKEN,
                # target services in-process (the sandbox has its own tests); agents still run
                # in their bwrap agent hosts and agent code in the scoring sandbox
                "HARNESS_SANDBOX": "inprocess",
                "HARNESS_POLL_INTERVAL_S": "0.1",
                "HARNESS_API_ALLOW_DOTTED_AGENTS": "1",  # web_agents:SlowNumericAgent
                "PYTHONPATH": os.pathsep.join([str(HERE), str(ROOT), env.get("PYTHONPATH", "")]),
            }
        )
        self.log = open(self.log_path, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "--factory", "harness.api:create_app",
             "--host", "127.0.0.1", "--port", str(self.port), "--log-level", "warning"],
            env=env, cwd=str(ROOT), stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.log_path.read_text()[-3000:]}")
            try:
                if httpx.get(self.url + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        else:
            raise RuntimeError(f"server did not start: {self.log_path.read_text()[-3000:]}")
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
        raise AssertionError(f"run {run_id} did not end: {self.log_path.read_text()[-3000:]}")

    def stop(self) -> None:
        self.api.close()
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


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


@pytest.fixture(scope="package")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is None:
        pytest.skip(f"Debian chromium not found at {CHROMIUM} (scripts/install.sh installs it)")
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
