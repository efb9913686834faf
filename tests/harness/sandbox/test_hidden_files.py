"""Issue 22: a target service's hidden files (the full target with its canary) are written 0400
inside the process's swept directory and never outlive their service: a killed service's files go
when the pool replaces it, and a killed server's files go at the next start's sweep. Real bwrap."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from support.trust_helpers import ROOT

from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.models import make_canary
from interp_harness.harness.sandbox import workdir

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
TARGET = "find-v1/numeric/f00473"

OWNER = """
import asyncio, json, sys, time
from interp_harness.function_store.catalog import Catalog
from interp_harness.harness.sandbox.base import get_sandbox
from interp_harness.harness.sandbox.pool import ServicePool
from interp_harness.harness.target_client import ServiceTargetClient

sandbox = get_sandbox("bwrap")
pool = ServicePool(sandbox)
client = ServiceTargetClient(Catalog(), pool)
asyncio.run(client.prewarm([sys.argv[1]]))
(h,) = pool.handles()
svc = sandbox._services[h.url]
print(json.dumps({"files": svc.files_dir, "pid": h.meta["pid"]}), flush=True)
time.sleep(600)
"""


def _hidden_files(files_dir: str) -> list[Path]:
    files = [p for p in Path(files_dir).rglob("*") if p.is_file()]
    assert files and all(p.stat().st_mode & 0o777 == 0o400 for p in files)
    canary = make_canary(TARGET)
    assert any(canary.encode() in p.read_bytes() for p in files)  # the full hidden target
    return files


def test_killed_server_leaves_hidden_files_only_until_the_next_sweep(tmp_path: Path) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="hf-", dir="/tmp"))  # short: sockets live under it
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)}
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, TARGET], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        info = json.loads(owner.stdout.readline())  # type: ignore[union-attr]
        root = tmp / f"interp-harness-{os.getuid()}"
        files = _hidden_files(info["files"])
        assert Path(info["files"]).parent.parent == root  # <root>/proc-<pid>-*/sbx-files-*
        owner.kill()  # kill -9: no atexit, no cleanup
        owner.wait()
        os.killpg(info["pid"], signal.SIGKILL)
        time.sleep(0.2)
        assert all(p.exists() for p in files), "the kill left nothing: the test proves nothing"

        old = tempfile.tempdir
        tempfile.tempdir = str(tmp)
        try:
            swept = workdir.sweep_stale()  # what `harness serve` / `harness run` do at start
        finally:
            tempfile.tempdir = old
        assert Path(info["files"]).parent in swept
        assert not any(p.exists() for p in files) and list(root.iterdir()) == []
    finally:
        if owner.poll() is None:
            owner.kill()
        shutil.rmtree(tmp, ignore_errors=True)


def test_killed_service_files_go_with_it() -> None:
    from interp_harness.harness.sandbox.base import get_sandbox
    from interp_harness.harness.sandbox.pool import ServicePool
    from interp_harness.harness.target_client import ServiceTargetClient

    sandbox = get_sandbox("bwrap")
    pool = ServicePool(sandbox)
    client = ServiceTargetClient(Catalog(), pool)

    async def go() -> None:
        await client.prewarm([TARGET])
        (h,) = pool.handles()
        files = _hidden_files(sandbox._services[h.url].files_dir)  # type: ignore[attr-defined]
        os.killpg(h.meta["pid"], signal.SIGKILL)
        time.sleep(0.2)
        (out,) = await client.call(TARGET, ["0"])  # the pool replaces the dead instance
        assert out.output == "-5.0"
        assert not any(p.exists() for p in files)
        (h2,) = pool.handles()
        _hidden_files(sandbox._services[h2.url].files_dir)  # type: ignore[attr-defined]

    try:
        asyncio.run(go())
    finally:
        asyncio.run(client.aclose())
        pool.close()
