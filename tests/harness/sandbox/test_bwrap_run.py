"""Sandbox.run on the real bubblewrap backend: isolation, limits and error reporting."""

import sys
import time

import pytest

from interp_harness.harness.sandbox import Limits

PY = sys.executable


def test_runs_argv_with_files_and_stdin(bwrap):
    code = b"import sys; print(sys.argv[1:], open('/sandbox/data.txt').read(), sys.stdin.read())"
    r = bwrap.run(
        [PY, "/sandbox/main.py", "a b", "$(x)"],
        files={"main.py": code, "data.txt": b"DATA"},
        stdin=b"IN",
    )
    assert r.error is None and r.returncode == 0 and not r.timed_out
    # argv reaches the program verbatim: no shell ever sees "$(x)"
    assert r.stdout == b"['a b', '$(x)'] DATA IN\n"


def test_nonzero_exit_and_stderr(bwrap):
    r = bwrap.run([PY, "-c", "import sys; sys.stderr.write('bad'); sys.exit(3)"])
    assert r.returncode == 3 and r.stderr == b"bad" and r.error is None


def test_no_network(bwrap):
    code = (
        "import socket\n"
        "try:\n"
        "    socket.create_connection(('1.1.1.1', 53), timeout=2); print('CONNECTED')\n"
        "except OSError as e:\n"
        "    print('errno', e.errno)\n"
        "print(sorted(n for _, n in socket.if_nameindex()))\n"
    )
    r = bwrap.run([PY, "-c", code])
    assert b"CONNECTED" not in r.stdout
    assert r.stdout.splitlines()[-1] == b"['lo']"


def test_read_only_system_private_tmp_and_no_host_dirs(bwrap, tmp_path):
    marker = tmp_path / "host-visible"
    marker.write_text("secret")
    script = (
        f"touch /usr/sbx-marker 2>/dev/null && echo USR_WRITABLE; "
        f"cat {marker} 2>/dev/null && echo HOST_VISIBLE; "
        "touch /sandbox/x 2>/dev/null && echo FILES_WRITABLE; "
        "echo ok > /tmp/t && cat /tmp/t; id -u"
    )
    r = bwrap.run(["/bin/sh", "-c", script], files={"f": b"1"})
    assert r.stdout == b"ok\n65534\n", r.stdout + r.stderr
    assert not (tmp_path / "x").exists()


def test_private_tmp_is_not_the_hosts(bwrap, tmp_path):
    bwrap.run(["/bin/sh", "-c", "echo leaked > /tmp/sbx-private-tmp-probe"])
    import os

    assert not os.path.exists("/tmp/sbx-private-tmp-probe")


def test_wall_clock_timeout(bwrap):
    t0 = time.monotonic()
    r = bwrap.run([PY, "-c", "import time; time.sleep(30)"], limits=Limits(timeout_s=1.0))
    assert r.timed_out and r.returncode is None
    assert r.error.startswith("timeout")
    assert time.monotonic() - t0 < 20  # killed, not left to sleep its 30 s


def test_cpu_time_limit(bwrap):
    r = bwrap.run([PY, "-c", "while True: pass"], limits=Limits(timeout_s=20, cpu_s=1))
    assert not r.timed_out
    assert r.error == "cpu time limit exceeded"


def test_memory_limit(bwrap):
    r = bwrap.run([PY, "-c", "x = bytearray(700 * 2**20)"], limits=Limits(memory_mb=256))
    assert r.returncode != 0
    assert r.error.startswith("memory limit")


def test_output_cap(bwrap):
    r = bwrap.run([PY, "-c", "print('x' * 3_000_000)"], limits=Limits(max_output_bytes=1000))
    assert r.output_truncated and len(r.stdout) == 1000
    assert r.error.startswith("output limit")


def test_fork_bomb_is_contained(bwrap):
    t0 = time.monotonic()
    r = bwrap.run(
        ["/bin/sh", "-c", "f(){ f | f & }; f; sleep 2"], limits=Limits(timeout_s=5, max_procs=32)
    )
    assert time.monotonic() - t0 < 10
    assert r.error is not None and ("process limit" in r.error or "timeout" in r.error)


def test_bad_file_names_rejected(bwrap):
    for bad in ("../x", "a/../b", "/etc/x", "", ".hidden", "a//b"):
        with pytest.raises(ValueError):
            bwrap.run(["/bin/true"], files={bad: b""})


def test_processes_die_with_the_run(bwrap, tmp_path):
    # a background child that outlives the main command must not survive the sandbox
    r = bwrap.run(["/bin/sh", "-c", "(sleep 3; echo late) & echo started"])
    assert r.stdout == b"started\n"
    import subprocess

    out = subprocess.run(["pgrep", "-f", "sleep 3; echo late"], capture_output=True).stdout
    assert out == b""
