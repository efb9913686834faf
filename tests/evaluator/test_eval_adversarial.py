"""Hostile agent code, run through the real bwrap sandbox: each ends as a failure with a reason."""

import os
import shutil
import socket
import threading

import pytest
from support.evaluator_helpers import numeric_target

from interp_harness.evaluator.numeric.scorer import score_numeric_batch
from interp_harness.evaluator.parsing import parse_answer
from interp_harness.evaluator.sandbox_exec import CodeJob, CodeLimits, ExecSettings, run_code_jobs
from interp_harness.evaluator.scorer import EvalSettings, Item
from interp_harness.harness.sandbox.code_runner import run_in_sandbox

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")

LIMITS = CodeLimits(cpu_s=1, wall_s=3, memory_mb=200, output_bytes=100_000)


def _job(i: str, body: str) -> CodeJob:
    return CodeJob(id=i, code=body, func_name="f", kind="number", inputs=["1.5", "2.5"])


def test_hostile_answers_fail_with_reasons_and_batch_goes_on(tmp_path):
    hits: list[bytes] = []
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    srv.settimeout(0.2)
    port = srv.getsockname()[1]
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                c, _ = srv.accept()
                hits.append(c.recv(100))
                c.close()
            except OSError:
                pass

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET")
    data_file = os.environ["HARNESS_DATA_DIR"] + "/find/numeric/data.json"
    jobs = [
        _job("loop", "def f(x):\n    while True:\n        pass"),
        _job("sleep", "import time\ndef f(x):\n    time.sleep(60)"),
        _job("forkbomb", "import os\ndef f(x):\n    while True:\n        os.fork()"),
        _job(
            "subprocess",
            "import subprocess\ndef f(x):\n    return float(subprocess.check_output(['echo', '1']))",
        ),
        _job(
            "socket",
            f"import socket\ndef f(x):\n    s = socket.create_connection(('127.0.0.1', {port}), timeout=1)\n    s.send(b'leak')\n    return 1.0",
        ),
        _job("read-host-file", f"def f(x):\n    return float(len(open({str(secret)!r}).read()))"),
        _job("read-data", f"def f(x):\n    return float(len(open({data_file!r}).read()))"),
        _job("alloc-1gb", "def f(x):\n    b = bytearray(1 << 30)\n    return 1.0"),
        _job(
            "print-100mb",
            "def f(x):\n    for _ in range(100):\n        print('x' * 1_000_000)\n    return 1.0",
        ),
        _job(
            "kill-parent",
            "import os, signal\ndef f(x):\n    os.kill(os.getppid(), signal.SIGKILL)\n    os.kill(-1, signal.SIGKILL)\n    return 1.0",
        ),
        _job("exit", "import os\ndef f(x):\n    os._exit(0)"),
        _job("syntax", "def f(x) return"),
        _job("good", "def f(x):\n    return 2 * x"),
    ]
    try:
        res = {
            r.id: r
            for r in run_code_jobs(
                jobs,
                limits=LIMITS,
                settings=ExecSettings(sandbox="bwrap", chunk_size=20),
                runner=run_in_sandbox,
            )
        }
    finally:
        stop.set()
        t.join(2)
        srv.close()

    def failed(i: str) -> str:
        r = res[i]
        if r.status == "error":
            return r.reason or ""
        errs = [x["err"] for x in r.results if "err" in x]
        assert errs, f"{i} did not fail: {r}"
        return errs[0]

    assert "cpu time" in failed("loop")
    assert "wall-clock" in failed("sleep")
    assert "not permitted" in failed("forkbomb")
    assert "not permitted" in failed("subprocess")
    assert "not permitted" in failed("socket") or "unreachable" in failed("socket").lower()
    assert "No such file" in failed("read-host-file")
    assert "No such file" in failed("read-data")
    assert "MemoryError" in failed("alloc-1gb")
    assert "File too large" in failed("print-100mb") and res["print-100mb"].printed_bytes <= 100_000
    assert "not permitted" in failed("kill-parent")
    assert "exited early" in failed("exit")
    assert "SyntaxError" in failed("syntax")
    assert res["good"].status == "ok" and res["good"].results == [
        {"v": [3.0, 0.0]},
        {"v": [5.0, 0.0]},
    ]
    assert hits == []  # nothing reached the host's loopback
    # nothing left running
    leftovers = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if b"/sandbox/worker.py" in f.read():
                        leftovers.append(pid)
            except OSError:
                pass
    assert leftovers == []


def test_scorer_keeps_going_after_hostile_answer():
    lin = numeric_target("lin2", lambda x: x + 1.0)
    bad = parse_answer("[CODE]: ```python\ndef f(x):\n    while True:\n        pass\n```")
    good = parse_answer("[CODE]: ```python\ndef f(x):\n    return x + 1\n```")
    s = EvalSettings(cpu_s=1, wall_s=3)
    out = score_numeric_batch([Item(lin, bad), Item(lin, good)], settings=s, runner=run_in_sandbox)
    assert out[0][1].metric == "code_success" and out[0][1].value == 0.0
    assert "cpu time" in out[0][1].details["failure"]
    assert out[1][1].value == 1.0
