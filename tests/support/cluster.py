"""A real multi-node Ray cluster on this machine, for the scale-out tests and
benchmarks/scale_out.py (PostgreSQL: tests/support/pg_server.py). Started here and stopped here: every
process it starts is in a process group of its own, killed at the end even when the caller
failed."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from support import HOSTED, ROOT, free_port


# ---- Ray ----------------------------------------------------------------------------------------
def worker_env(token: str, **extra: str) -> dict[str, str]:
    """The environment of the Ray nodes (their worker processes inherit it): this tree and the
    test plugin on the path, the reference data, no usage reporting."""
    env = dict(os.environ)
    env.update(
        {
            "PYTHONPATH": os.pathsep.join([str(ROOT), str(HOSTED), env.get("PYTHONPATH", "")]),
            "HARNESS_DATA_DIR": env.get("HARNESS_DATA_DIR", str(ROOT.parents[1] / "shared/data")),
            "RAY_USAGE_STATS_ENABLED": "0",
            # results are compared target by target: a loaded machine must not turn a call
            # into a timeout in one run and not in the other
            "HARNESS_SERVICE_CALL_TIMEOUT_S": "120",
            # token authentication between nodes and drivers, with this cluster's own token
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN": token,
        }
    )
    env.update(extra)
    return env


class RayCluster:
    """`ray start --head` plus `ray start --address=...` per extra node, on loopback, with their
    own temp dir and free ports. Each node is one process group (killed by `stop`)."""

    def __init__(
        self, *, cpus_per_node: float = 1, object_store_mb: int = 100, token: str | None = None
    ) -> None:
        self.cpus, self.store_mb = cpus_per_node, object_store_mb
        # short: Ray's unix socket paths live under it (at most 107 characters)
        self.temp = tempfile.mkdtemp(prefix="hray-", dir="/tmp")
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        # a driver process keeps the first token it used: one per process when it sees several
        self.token = token or secrets.token_hex(32)
        self.env = worker_env(self.token)
        self.nodes: list[int] = []  # process group ids, head first

    def _ray(self, args: list[str]) -> None:
        argv = [sys.executable, "-m", "ray.scripts.scripts", "start", *args]
        common = [
            "--node-ip-address=127.0.0.1",
            f"--num-cpus={self.cpus}",
            f"--object-store-memory={self.store_mb * 2**20}",
            f"--dashboard-agent-listen-port={free_port()}",
            f"--dashboard-agent-grpc-port={free_port()}",
            f"--metrics-export-port={free_port()}",
            f"--runtime-env-agent-port={free_port()}",
            "--disable-usage-stats",
        ]
        log = open(Path(self.temp) / f"start{len(self.nodes)}.log", "wb")  # noqa: SIM115
        with log:
            proc = subprocess.Popen(
                argv + common,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its daemons keep this process group: stop() kills it
            )
            self.nodes.append(proc.pid)
            rc = proc.wait(timeout=240)
        if rc != 0:
            raise RuntimeError(
                f"ray start failed ({rc}): {(Path(self.temp) / f'start{len(self.nodes) - 1}.log').read_text()[-2000:]}"
            )

    def start(self, extra_nodes: int = 1) -> RayCluster:
        self._ray(
            [
                "--head",
                f"--port={self.port}",
                f"--ray-client-server-port={free_port()}",
                "--include-dashboard=false",
                f"--temp-dir={self.temp}",
            ]
        )
        for _ in range(extra_nodes):
            self.add_node()
        return self

    def add_node(self) -> None:
        self._ray([f"--address={self.address}"])

    def stop(self) -> None:
        for pgid in reversed(self.nodes):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
        self.nodes.clear()
        time.sleep(0.5)
        if not os.environ.get("KEEP_RAY_TEMP"):
            shutil.rmtree(self.temp, ignore_errors=True)


@contextlib.contextmanager
def ray_cluster(extra_nodes: int = 1, **kw: Any) -> Iterator[RayCluster]:
    cluster = RayCluster(**kw)
    try:
        yield cluster.start(extra_nodes)
    finally:
        cluster.stop()
