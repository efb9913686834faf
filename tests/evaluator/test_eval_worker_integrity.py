"""Scoring can't be dodged: agent code that attacks the scoring worker itself (signals through
pidfds or sigqueue, its rlimits, forged or hostile records on its result pipe) fails as that
answer, scored 0 with the reason, and the innocent answers of the same batch are still scored.
Everything runs through the real bwrap sandbox."""

import shutil

import pytest
from support.evaluator_helpers import numeric_target

from interp_harness.evaluator.numeric.scorer import score_numeric_batch
from interp_harness.evaluator.parsing import parse_answer
from interp_harness.evaluator.sandbox_exec import CodeJob, CodeLimits, ExecSettings, run_code_jobs
from interp_harness.evaluator.scorer import EvalSettings, Item
from interp_harness.harness.sandbox.code_runner import run_in_sandbox

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")

LIMITS = CodeLimits(cpu_s=1, wall_s=3, memory_mb=200, output_bytes=100_000)
SETTINGS = ExecSettings(sandbox="bwrap", chunk_size=50)

_LIBC = "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
_RESULT_FD = (
    "def result_fd():\n"
    "    for fd in range(3, 64):\n"
    "        try:\n"
    "            os.fstat(fd)\n"
    "            return fd\n"
    "        except OSError:\n"
    "            pass\n"
)

ATTACKS = {
    # pidfd_open(ppid) then pidfd_send_signal(fd, SIGKILL)
    "pidfd": _LIBC + "def f(x):\n"
    "    fd = libc.syscall(434, os.getppid(), 0)\n"
    "    return float(libc.syscall(424, fd, 9, None, 0))\n",
    # rt_sigqueueinfo(ppid, SIGKILL, {si_code = SI_QUEUE})
    "sigqueue": _LIBC + "def f(x):\n"
    "    info = (ctypes.c_int * 32)(9, 0, -1)\n"
    "    return float(libc.syscall(129, os.getppid(), 9, info))\n",
    # prlimit64(ppid, RLIMIT_CPU, {0, 0}): the parent dies of 'cpu time'
    "prlimit-parent": _LIBC + "def f(x):\n"
    "    lim = (ctypes.c_ulong * 2)(0, 0)\n"
    "    return float(libc.syscall(302, os.getppid(), 0, lim, None))\n",
    # F_SETOWN(ppid) + F_SETSIG(SIGKILL) + O_ASYNC on a pipe: the kernel would signal the worker
    "setown": "import fcntl, os\n"
    "def f(x):\n"
    "    r, w = os.pipe()\n"
    "    try:\n"
    "        fcntl.fcntl(r, fcntl.F_SETOWN, os.getppid())\n"
    "    except OSError:\n"
    "        return -1.0\n"
    "    fcntl.fcntl(r, 10, 9)\n"
    "    fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC)\n"
    "    os.write(w, b'x')\n"
    "    return 1.0\n",
    # a 100,000-deep JSON list on the result pipe
    "deep-json": "import os\n" + _RESULT_FD + "def f(x):\n"
    "    os.write(result_fd(), b'[' * 100_000 + b'\\n')\n"
    "    return 1.0\n",
    # a record of the wrong shape
    "bad-record": "import os\n" + _RESULT_FD + "def f(x):\n"
    '    os.write(result_fd(), b\'{"r": 5}\\n{"guard": [1, 2]}\\n\')\n'
    "    return 1.0\n",
}
SYSCALL_ATTACKS = {"pidfd", "sigqueue", "prlimit-parent", "setown"}


def _job(i: str, body: str) -> CodeJob:
    return CodeJob(id=i, code=body, func_name="f", kind="number", inputs=["1.5", "2.5"])


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_worker_attack_fails_that_answer_only(attack):
    good = "def f(x):\n    return 2 * x\n"
    jobs = [_job("before", good), _job(attack, ATTACKS[attack]), _job("after", good)]
    res = {
        r.id: r
        for r in run_code_jobs(jobs, limits=LIMITS, settings=SETTINGS, runner=run_in_sandbox)
    }
    for innocent in ("before", "after"):
        assert res[innocent].status == "ok", res[innocent]
        assert res[innocent].results == [{"v": [3.0, 0.0]}, {"v": [5.0, 0.0]}]
    bad = res[attack]
    if attack in SYSCALL_ATTACKS:  # refused: the syscall returned -1 and the answer went on
        assert bad.status == "ok" and bad.results == [{"v": [-1.0, 0.0]}] * 2, bad
    else:  # a forged record is that answer's failure (scored 0), never "infrastructure"
        assert bad.status == "error" and "invalid record" in (bad.reason or ""), bad


def test_worker_attacks_are_scored_zero_with_reason():
    lin = numeric_target("lin2x", lambda x: 2.0 * x)
    good = parse_answer("[CODE]: ```python\ndef f(x):\n    return 2 * x\n```")
    items = [Item(lin, good)]
    for body in ATTACKS.values():
        items.append(Item(lin, parse_answer(f"[CODE]: ```python\n{body}```")))
    items.append(Item(lin, good))
    out = score_numeric_batch(
        items, settings=EvalSettings(cpu_s=1, wall_s=3), runner=run_in_sandbox
    )
    code = [next(s for s in scores if s.metric == "code_success") for scores in out]
    assert code[0].status == "ok" and code[0].value == 1.0
    assert code[-1].status == "ok" and code[-1].value == 1.0
    for s in code[1:-1]:  # scored, and wrong: never left out of the mean as an error
        assert s.status == "ok" and s.value == 0.0, s


def test_proc_1_does_not_show_the_host_command_line():
    body = "def f(x):\n    return open('/proc/1/cmdline', 'rb').read().decode(errors='replace')\n"
    job = CodeJob(id="p", code=body, func_name="f", kind="text", inputs=["a"])
    (res,) = run_code_jobs([job], limits=LIMITS, settings=SETTINGS, runner=run_in_sandbox)
    assert res.status == "ok", res
    seen = res.results[0]["v"]
    # bwrap's reaper is PID 1 there: it may say "bwrap", never the host paths or mount flags
    assert "sbx-" not in seen and "--ro-bind" not in seen and "--setenv" not in seen, seen


def test_a_dead_worker_is_blamed_on_the_answer_that_kills_it_alone(monkeypatch):
    """The attribution logic, with a stand-in for one sandboxed worker: answers run in order,
    `killer` takes the worker down whenever it runs, `flaky` once (a transient failure)."""
    from interp_harness.evaluator import sandbox_exec

    deaths: list[list[str]] = []

    def fake_batch(jobs, runner, limits, settings):
        got, started = {}, set()
        for j in jobs:
            started.add(j.id)
            if j.id == "killer" or (j.id == "flaky" and not any("flaky" in d for d in deaths)):
                deaths.append([x.id for x in jobs])
                return got, started, "sandbox exited with status 137"
            got[j.id] = sandbox_exec.CodeResult(id=j.id, status="ok")
        return got, started, None

    monkeypatch.setattr(sandbox_exec, "_run_batch", fake_batch)
    jobs = [_job(i, "def f(x): return x") for i in ("a", "flaky", "b", "killer", "c")]
    res = {
        r.id: r for r in sandbox_exec.run_code_jobs(jobs, settings=SETTINGS, runner=run_in_sandbox)
    }
    assert res["killer"].status == "error" and "killed the scoring worker" in res["killer"].reason
    assert all(res[i].status == "ok" for i in ("a", "flaky", "b", "c")), res
    # the killer was blamed only after it took a worker down while running alone
    assert ["killer"] in deaths


def test_a_sandbox_that_never_starts_is_infrastructure(monkeypatch):
    from interp_harness.evaluator import sandbox_exec

    monkeypatch.setattr(
        sandbox_exec, "_run_batch", lambda jobs, runner, lim, st: ({}, set(), "no bwrap")
    )
    (res,) = sandbox_exec.run_code_jobs(
        [_job("a", "def f(x): return x")], settings=SETTINGS, runner=run_in_sandbox
    )
    assert res.status == "infrastructure" and res.reason == "no bwrap"
