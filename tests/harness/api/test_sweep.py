"""Issue 11, reproduction 3: sandbox directories and processes left by a killed server are swept
on the next start, and only those: never a live process's, never another user's or project's."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx
import pytest
from support import wait_for

from interp_harness.harness.sandbox import workdir

pytestmark = pytest.mark.skipif(
    not os.path.exists("/usr/bin/bwrap"), reason="bubblewrap is not installed"
)
TARGETS = [f"find-v1/numeric/f00{i}" for i in range(150, 154)]


@pytest.fixture
def short_tmp(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A short TMPDIR (sockets live under the project root) for this process's tempfile."""
    d = Path(tempfile.mkdtemp(prefix="trust-", dir="/tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    monkeypatch.setattr(workdir, "_INSTANCE", None)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _bound_to(dirs: list[Path]) -> list[tuple[int, str]]:
    """(pid, command) of every process using a path inside `dirs` (command line or mounts)."""
    out = []
    for d in dirs:
        for pid in workdir.processes_bound_to(d):
            with contextlib.suppress(OSError):
                out.append(
                    (pid, (Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]).decode())
                )
    return out


def _run_status(home: Path, run_id: str) -> str:
    with sqlite3.connect(home / "harness.db") as c:
        return c.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()[0]


@pytest.mark.slow
def test_kill_9_mid_run_leaves_nothing_after_restart(start_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env = {"HARNESS_SANDBOX": "bwrap", "HARNESS_MAX_CONCURRENCY": "1"}
    srv = start_server(env)
    root = srv.tmpdir / f"interp-harness-{os.getuid()}"
    body = {"agent": "scripted-numeric", "dataset": "find-v1", "ids": TARGETS, "floor": False}
    r = srv.post_run(body)
    assert r.status_code == 201, r.text
    run_id = r.json()["id"]
    wait_for(
        lambda: (
            httpx.get(f"{srv.url}/runs/{run_id}").json()["usage"]["target_calls"] >= 1
            and list(root.glob("proc-*/sbx-svc-*"))
        ),
        120,
        0.02,
    )
    first = [d for d in root.glob("proc-*") if d.is_dir()]
    assert len(first) == 1 and Path(f"{first[0]}.lock").exists()
    assert any("bwrap" in cmd for _, cmd in _bound_to(first)), "no sandbox was running"
    srv.kill9()
    assert _run_status(srv.home, run_id) == "running"  # really killed mid-run
    assert list(first[0].glob("sbx-svc-*")), "the kill left nothing: the test would prove nothing"

    srv2 = start_server(env, after=srv)
    wait_for(lambda: _run_status(srv.home, run_id) in ("completed", "failed"), 300, 0.2)
    detail = httpx.get(f"{srv2.url}/runs/{run_id}").json()
    assert detail["status"] == "completed", detail
    assert detail["progress"]["by_status"] == {"completed": len(TARGETS)}

    assert not first[0].exists() and not Path(f"{first[0]}.lock").exists()
    assert _bound_to(first) == []
    # the live server's own directory is untouched by another process's sweep
    live = [d for d in root.glob("proc-*") if d.is_dir()]
    assert len(live) == 1 and live[0] != first[0]
    old_tmp = tempfile.tempdir
    tempfile.tempdir = str(srv.tmpdir)
    try:
        assert workdir.sweep_stale() == []
    finally:
        tempfile.tempdir = old_tmp
    assert live[0].is_dir() and Path(f"{live[0]}.lock").exists()
    srv2.stop()  # a clean exit removes its own directory
    assert [p.name for p in root.iterdir()] == []


HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(600)
"""


def test_sweep_kills_stale_sandbox_processes_and_spares_live_and_foreign(short_tmp: Path) -> None:
    root = workdir.project_root()
    assert root == short_tmp / f"interp-harness-{os.getuid()}"
    assert root.stat().st_mode & 0o777 == 0o700

    def instance(name: str) -> Path:
        (root / f"{name}.lock").touch()
        (root / name / "sbx-svc-x").mkdir(parents=True)
        return root / name

    dead, live, orphan = instance("proc-1-dead"), instance("proc-2-live"), instance("proc-3-o")
    os.unlink(f"{orphan}.lock")
    other = root / "not-ours"  # not this project's prefix
    other.mkdir()
    # a process still bound to the dead instance's directory, as a surviving bwrap would be
    stale = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)", str(dead / "sbx-svc-x")],
        start_new_session=True,
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, f"{live}.lock"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        removed = workdir.sweep_stale()
        assert sorted(removed) == sorted([dead, orphan])
        assert stale.wait(10) == -9
        assert not dead.exists() and not Path(f"{dead}.lock").exists() and not orphan.exists()
        assert (live / "sbx-svc-x").is_dir() and other.is_dir()
    finally:
        for p in (stale, holder):
            if p.poll() is None:
                p.kill()
                p.wait()
    # the holder died: its instance is stale now
    assert workdir.sweep_stale() == [live]

    # this process's own instance survives its own sweep, and sandboxes put their files in it
    mine = workdir.instance_dir()
    assert workdir.sweep_stale() == [] and mine.is_dir()
    fd = os.open(f"{mine}.lock", os.O_RDWR)
    try:
        with pytest.raises(BlockingIOError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)
    workdir.release_instance()
    assert list(root.iterdir()) == [other]


def test_a_root_someone_else_could_write_is_refused(
    short_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = short_tmp / f"interp-harness-{os.getuid()}"
    root.mkdir(mode=0o777)
    root.chmod(0o777)
    with pytest.raises(workdir.SandboxError, match="mode 0700"):
        workdir.project_root()
    root.rmdir()
    target = short_tmp / "elsewhere"
    target.mkdir(mode=0o700)
    root.symlink_to(target)
    with pytest.raises(workdir.SandboxError):
        workdir.project_root()
    monkeypatch.setattr(tempfile, "tempdir", "/tmp/" + "x" * 60)
    with pytest.raises(workdir.SandboxError, match="too long"):
        workdir.project_root()
