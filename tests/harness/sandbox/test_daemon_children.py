"""The compose sandbox daemon's children (issue 27, item 1): a real `harness sandbox daemon` on a
Unix socket, reached through RemoteSandbox as the api reaches it. The daemon's own environment
holds canaries; its children start with the minimal environment and cannot read the daemon's
(it makes itself undumpable), and a run's result channel comes back apart from stdout.

In compose the daemon runs as uid 65534 without capabilities; here it runs under `setpriv` with
every capability dropped (as root, whose home the interpreter lives in), which is what the
kernel's /proc checks look at."""

from __future__ import annotations

import inspect
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import sbx_env_agent
from support import HARNESS_CLI

from interp_harness.harness.sandbox.daemon import ExecDaemon

ROOT = Path(__file__).resolve().parents[3]
CANARY = "canary-daemon-env-secret-4b1f"

pytestmark = pytest.mark.skipif(
    shutil.which("setpriv") is None, reason="util-linux setpriv missing"
)

PROGRAM = inspect.getsource(sbx_env_agent.snoop) + (
    "import os, sys\n"
    "text = snoop()\n"
    "ppid = os.getppid()\n"
    "text += f'\\nparent {ppid}'\n"
    "for k in range(64):\n"
    "    try:\n"
    "        os.close(os.open(f'/proc/{ppid}/fd/{k}', os.O_WRONLY))\n"
    "        text += f'\\nopened /proc/{ppid}/fd/{k}'\n"
    "    except OSError:\n"
    "        pass\n"
    "print('on stdout')\n"
    "os.write(int(os.environ['SANDBOX_RESULT_FD']), text.encode())\n"
)


@pytest.fixture
def daemon():  # type: ignore[no-untyped-def]
    d = tempfile.mkdtemp(prefix="daemon-test-")
    sock = os.path.join(d, "exec.sock")
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(ROOT),
        "OPENAI_API_KEY": CANARY,
        "HARNESS_API_TOKENS": CANARY,
    }
    argv = [*HARNESS_CLI, "sandbox", "daemon", "--socket", sock]
    proc = subprocess.Popen(
        ["setpriv", "--inh-caps=-all", "--bounding-set=-all", *argv],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not os.path.exists(sock):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"daemon did not start: {proc.stderr.read().decode()[-2000:]}")
        time.sleep(0.1)
    yield sock
    proc.terminate()
    proc.wait(10)
    shutil.rmtree(d, ignore_errors=True)


def test_daemon_children_get_no_environment_of_the_daemon_and_a_private_channel(daemon):
    sb = ExecDaemon(daemon)
    res = sb.run([sys.executable, "/sandbox/p.py"], files={"p.py": PROGRAM.encode()},
                 result_channel=True)  # fmt: skip
    assert res.returncode == 0, res
    assert res.stdout == b"on stdout\n"
    text = (res.result or b"").decode()
    assert "os.environ: PATH=" in text, text  # the program ran and wrote its channel
    assert CANARY not in text + res.stderr.decode(), text
    # the daemon (its parent, undumpable) keeps its environment and descriptors to itself
    ppid = text.rsplit("\nparent ", 1)[1].split()[0]
    assert f"/proc/{ppid}/environ! PermissionError" in text, text
    assert "opened /proc/" not in text, text
