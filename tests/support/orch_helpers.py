"""Helpers shared by the orchestrator tests: the API server subprocess and polling."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Self

from support import HOSTED, ROOT, free_port, stop_process, wait_until_up


def server_env(db: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "DATABASE_URL": db,
            "HARNESS_SANDBOX": "inprocess",
            "HARNESS_PLUGINS": "orch_plugin",
            "HARNESS_SCORE_HOOK": "orch_plugin:score_hook",
            "HARNESS_POLL_INTERVAL_S": "0.1",
            # the test agents are named by dotted path (orch_plugin:ProbeAgent)
            "HARNESS_API_ALLOW_DOTTED_AGENTS": "1",
            "PYTHONPATH": os.pathsep.join([str(HOSTED), str(ROOT), env.get("PYTHONPATH", "")]),
        }
    )
    env.update(extra)
    return env


class Server:
    """The API server as a subprocess on a loopback port: `python -m uvicorn --factory
    interp_harness.harness.api:create_app`, or with `cli` `harness serve` (which runs uvicorn
    the same way). The one wrapper of a server process in the suite (trust_helpers.HarnessServer
    adds a private home)."""

    def __init__(
        self,
        env: dict[str, str],
        log: Path,
        *,
        cli: bool = False,
        python: str = sys.executable,
        cwd: Path = ROOT,
    ) -> None:
        self.env, self.log_path, self.cli, self.python, self.cwd = env, log, cli, python, cwd
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60) -> Self:
        if self.proc is not None:  # a restart after kill9: a fresh port, the old one may linger
            self.port = free_port()
            self.url = f"http://127.0.0.1:{self.port}"
        where = ["--host", "127.0.0.1", "--port", str(self.port), "--log-level", "warning"]
        app = (
            ["interp_harness.harness.cli", "serve"]
            if self.cli
            else ["uvicorn", "--factory", "interp_harness.harness.api:create_app"]
        )
        with open(self.log_path, "ab") as log:  # the child keeps its own descriptor
            self.proc = subprocess.Popen(
                [self.python, "-m", *app, *where],
                env=self.env,
                cwd=str(self.cwd),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        wait_until_up(self.proc, self.url + "/healthz", self.log, timeout, poll=0.1)
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill9(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self, grace: float = 15) -> None:
        stop_process(self.proc, grace=grace)


async def run_in_process(  # type: ignore[no-untyped-def]
    url: str, spec: dict, *, hook="default", runs: int = 1, timeout: float | None = None, **settings
):
    """Store `runs` copies of `spec`, run them to their end with an in-process scheduler on the
    in-process target client, and return (store, [run, ...]). `hook`: the score hook ("default":
    the orch-test plugin's; None: no scoring); `timeout`: seconds each run may take."""
    import asyncio

    import orch_plugin  # registers the orch-test targets, whatever the hook

    from interp_harness.harness.domain.catalogs import CatalogCache
    from interp_harness.harness.domain.spec import RunSpec
    from interp_harness.harness.runs.admission import create_run
    from interp_harness.harness.runs.scheduler import Scheduler
    from interp_harness.harness.settings import Settings
    from interp_harness.harness.store import make_engine
    from interp_harness.harness.store.repo import Store
    from interp_harness.harness.target_client import make_target_client

    store = Store(make_engine(url))
    cfg = Settings(sandbox="inprocess", poll_interval_s=0.05, **settings)
    cats = CatalogCache()
    created = [create_run(store, RunSpec.model_validate(spec), cats) for _ in range(runs)]
    sched = Scheduler(
        store,
        make_target_client(cfg, cats),
        settings=cfg,
        catalogs=cats,
        score_hook=orch_plugin.score_hook if hook == "default" else hook,
    )
    sched.start()
    try:
        done = [await asyncio.wait_for(sched.wait_run(r.id, poll_s=0.02), timeout) for r in created]
    finally:
        await sched.stop()
    return store, done


async def resume_in_process(store, run_id: str, **settings):  # type: ignore[no-untyped-def]
    """Start a scheduler on an existing store (as a restarted server would) and wait for run_id."""
    import orch_plugin

    from interp_harness.harness.domain.catalogs import CatalogCache
    from interp_harness.harness.runs.scheduler import Scheduler
    from interp_harness.harness.settings import Settings
    from interp_harness.harness.target_client import make_target_client

    cfg = Settings(sandbox="inprocess", poll_interval_s=0.05, **settings)
    cats = CatalogCache()
    sched = Scheduler(
        store,
        make_target_client(cfg, cats),
        settings=cfg,
        catalogs=cats,
        score_hook=orch_plugin.score_hook,
    )
    sched.start()
    try:
        return await sched.wait_run(run_id, poll_s=0.02)
    finally:
        await sched.stop()
