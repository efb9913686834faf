"""Answer code cannot forge scoring results (issue 27, item 2), through the real bwrap sandbox.

The hostile answer writes well-formed records of every kind the orchestrator ever read ({"start":
id}, results with status ok / error / infrastructure for its own id and its siblings'), and
garbage, into every descriptor of another process it can open: /proc/1/fd/1 and /proc/1/fd/2 (the
sandbox's stdout and stderr, held by bwrap's init), the scoring worker's (/proc/<ppid>/fd/*) and
every other /proc/*/fd/*; then it floods the sandbox's stdout past its cap (which used to cut the
worker's genuine records off). It must score exactly as a plain wrong answer does (0, never an
error left out of the mean), and the correct answers beside it keep 1.0.
"""

from __future__ import annotations

import textwrap

import pytest
from support.evaluator_helpers import numeric_target

from interp_harness.evaluator.numeric.scorer import score_numeric_batch
from interp_harness.evaluator.parsing import parse_answer
from interp_harness.evaluator.sandbox_exec import CodeJob, CodeLimits, ExecSettings, run_code_jobs
from interp_harness.evaluator.scorer import EvalSettings, Item
from interp_harness.harness.sandbox.code_runner import run_in_sandbox

pytestmark = pytest.mark.usefixtures("needs_bwrap")

IDS = ["0", "1", "2", "3", "good-a", "hostile", "good-b", "wrong"]
FORGER = textwrap.dedent(f"""
    import glob, json, os, stat, time

    IDS = {IDS!r}
    WRONG = -12345.0


    def _records(n):
        recs = []
        for i in IDS:
            recs.append({{"start": i}})
            recs.append({{"id": i, "status": "error", "reason": "sandbox failed", "results": []}})
            recs.append({{"id": i, "status": "infrastructure", "reason": "sandbox failed: forged"}})
        for i in IDS:  # the last word for each id: ours an "infrastructure" error, theirs a 0
            if i in ("hostile", "1"):
                recs.append({{"id": i, "status": "infrastructure", "reason": "forged"}})
            else:
                recs.append({{"id": i, "status": "ok", "results": [{{"v": [WRONG, 0.0]}}] * n}})
        recs += [{{"r": {{"v": [WRONG, 0.0]}}}}, {{"guard": "forged"}}, {{"load_error": "forged"}}]
        lines = [json.dumps(r) for r in recs] + ["{{garbage", "\\x00\\xff not json"]
        return ("\\n".join(lines) + "\\n").encode("utf-8", "surrogateescape")


    def _open_all(data):
        # every descriptor of another process we can open for writing: pipes are kept (to
        # flood later), anything else gets the records once
        me = str(os.getpid())
        paths = ["/proc/1/fd/1", "/proc/1/fd/2"]
        paths += [f"/proc/{{os.getppid()}}/fd/{{k}}" for k in range(256)]
        paths += sorted(glob.glob("/proc/[0-9]*/fd/*"))
        pipes = []
        for path in dict.fromkeys(paths):
            if path.split("/")[2] == me:  # not our own pipe: we stay a plain wrong answer
                continue
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                continue
            if stat.S_ISFIFO(os.fstat(fd).st_mode) and len(pipes) < 40:
                pipes.append(fd)
                continue
            try:
                os.write(fd, data)
            except OSError:
                pass
            os.close(fd)
        return pipes


    def _put(fd, data, deadline):
        while data and time.monotonic() < deadline:
            try:
                data = data[os.write(fd, data):]
            except BlockingIOError:
                time.sleep(0.001)
            except OSError:
                return


    SEEN = []


    def attack(n, delay):
        data = _records(n)
        time.sleep(min(delay, 0.3))  # with a delay: let the others start first
        SEEN.append(len(glob.glob("/proc/[0-9]*")))
        pipes = _open_all(data)
        for fd in pipes:
            _put(fd, data, time.monotonic() + 0.5)
        time.sleep(delay)  # the others finish meanwhile: our records come after theirs
        deadline = time.monotonic() + 4
        junk = (b"x" * 65535 + b"\\n") * 16
        for fd in pipes:  # past any cap on what is read from a pipe, then the records again
            for _ in range(24 * 2**20 // len(junk)):
                _put(fd, junk, deadline)
            _put(fd, data, deadline)
        return len(pipes)


    _done = []


    def f(x):
        if not _done:
            _done.append(attack(N_INPUTS, DELAY))
        return WRONG
""")
PLAIN_WRONG = "def f(x):\n    return -12345.0\n"
GOOD = "def f(x):\n    return 2 * x\n"
SETTINGS = ExecSettings(sandbox="bwrap", chunk_size=50)
LIMITS = CodeLimits(cpu_s=2, wall_s=10, memory_mb=256)


def _forger(n_inputs: int, delay: float = 0.0) -> str:
    return FORGER.replace("N_INPUTS", str(n_inputs)).replace("DELAY", repr(delay))


def _job(i: str, code: str) -> CodeJob:
    return CodeJob(id=i, code=code, func_name="f", kind="number", inputs=["1.5", "2.5"])


def test_forger_reaches_the_sandboxs_stdout() -> None:
    """The attack is real: the forger opens at least /proc/1/fd/1 (the sandbox's stdout)."""
    code = _forger(2).replace("return WRONG\n", "return float(_done[0])\n")
    (res,) = run_code_jobs(
        [_job("hostile", code)], limits=LIMITS, settings=SETTINGS, runner=run_in_sandbox
    )
    assert res.status == "ok", res
    assert res.results[0]["v"][0] >= 1, res


@pytest.mark.slow
def test_forged_records_change_no_result_in_a_batch() -> None:
    jobs = [_job("good-a", GOOD), _job("hostile", _forger(2)), _job("good-b", GOOD)]
    jobs.append(_job("wrong", PLAIN_WRONG))
    res = {
        r.id: r
        for r in run_code_jobs(jobs, limits=LIMITS, settings=SETTINGS, runner=run_in_sandbox)
    }
    for good in ("good-a", "good-b"):
        assert res[good].status == "ok", res[good]
        assert res[good].results == [{"v": [3.0, 0.0]}, {"v": [5.0, 0.0]}], res[good]
    wrong = [{"v": [-12345.0, 0.0]}] * 2
    assert res["wrong"].status == "ok" and res["wrong"].results == wrong, res["wrong"]
    assert res["hostile"].status == "ok" and res["hostile"].results == wrong, res["hostile"]
    assert res["hostile"].reason is None


@pytest.mark.slow
def test_forged_records_change_no_result_alone() -> None:
    (res,) = run_code_jobs(
        [_job("hostile", _forger(2))], limits=LIMITS, settings=SETTINGS, runner=run_in_sandbox
    )
    assert res.status == "ok" and res.results == [{"v": [-12345.0, 0.0]}] * 2, res


def _code_scores(items: list[Item]) -> list[tuple]:
    out = score_numeric_batch(
        items, settings=EvalSettings(cpu_s=2, wall_s=10), runner=run_in_sandbox
    )
    return [
        [(s.metric, s.status, s.error_category, s.value) for s in scores if s.metric != "domain"]
        for scores in out
    ]


def _answer(code: str):  # type: ignore[no-untyped-def]
    return parse_answer(f"[CODE]: ```python\n{code}```")


def test_a_forger_scores_as_a_plain_wrong_answer_and_its_siblings_keep_1() -> None:
    lin = numeric_target("forgery-lin", lambda x: 2.0 * x)
    items = [
        Item(lin, _answer(GOOD)),
        Item(lin, _answer(_forger(2))),
        Item(lin, _answer(GOOD)),
        Item(lin, _answer(PLAIN_WRONG)),
    ]
    good, hostile, good2, wrong = _code_scores(items)
    assert good == good2
    assert ("code_success", "ok", None, 1.0) in good, good
    assert ("code_success", "ok", None, 0.0) in wrong, wrong
    assert hostile == wrong, (hostile, wrong)


def test_a_forger_alone_scores_as_a_plain_wrong_answer() -> None:
    lin = numeric_target("forgery-lin", lambda x: 2.0 * x)
    (hostile,) = _code_scores([Item(lin, _answer(_forger(2)))])
    (wrong,) = _code_scores([Item(lin, _answer(PLAIN_WRONG))])
    assert hostile == wrong, (hostile, wrong)


@pytest.mark.slow
def test_answers_running_at_once_cannot_touch_each_others_results() -> None:
    """parallel_per_sandbox > 1: the forger runs beside its siblings (they sleep while it scans
    /proc) and cannot reach their result pipes or the worker's."""
    slow = "import time\ndef f(x):\n    time.sleep(1.0)\n    return 2 * x\n"
    code = _forger(2, delay=2.5).replace("return WRONG\n", "return float(SEEN[0])\n")
    jobs = [_job("good-a", slow), _job("hostile", code), _job("good-b", slow)]
    settings = ExecSettings(sandbox="bwrap", chunk_size=50, parallel_per_sandbox=3)
    res = {
        r.id: r
        for r in run_code_jobs(jobs, limits=LIMITS, settings=settings, runner=run_in_sandbox)
    }
    for good in ("good-a", "good-b"):
        assert res[good].status == "ok", res[good]
        assert res[good].results == [{"v": [3.0, 0.0]}, {"v": [5.0, 0.0]}], res[good]
    assert res["hostile"].status == "ok", res["hostile"]
    # it saw its siblings: bwrap's init, the worker, itself and both of them
    assert res["hostile"].results[0]["v"][0] >= 5, res["hostile"]


def test_answer_code_holds_no_descriptor_but_its_own() -> None:
    """The result channel is closed in every child, whatever its number: here above 1024 (the
    orchestrator's busy descriptor table), past the range a fixed close loop would cover."""
    import os
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2048:
        pytest.skip(f"RLIMIT_NOFILE hard limit {hard} < 2048: cannot push the channel above 1024")
    resource.setrlimit(resource.RLIMIT_NOFILE, (2048, hard))
    filler = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        code = "import os\ndef f(x):\n    return ' '.join(sorted(os.listdir('/proc/self/fd')))\n"
        job = CodeJob(id="fds", code=code, func_name="f", kind="text", inputs=["a"])
        (res,) = run_code_jobs([job], limits=LIMITS, settings=SETTINGS, runner=run_in_sandbox)
    finally:
        for fd in filler:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert res.status == "ok", res
    fds = [int(n) for n in res.results[0]["v"].split()]
    # stdin, stdout, stderr, its own record pipe, and the directory listing itself
    assert len(fds) == 5 and max(fds) < 1024, fds


def test_the_docker_backend_carries_results_the_forger_cannot_reach() -> None:
    """Docker's result channel is the container's stdout, held by the worker alone (PID 1 there,
    undumpable): the forger opens nothing, and every result stands."""
    import json

    from interp_harness.evaluator.sandbox_exec import WORKER_NAME, worker_source
    from interp_harness.harness.sandbox.base import Limits
    from interp_harness.harness.sandbox.docker_engine import docker_sandbox_or_skip

    sb = docker_sandbox_or_skip()
    counting = _forger(2).replace("return WRONG\n", "return float(_done[0])\n")
    jobs = [_job("good-a", GOOD), _job("hostile", _forger(2)), _job("counting", counting)]
    batch = {
        "limits": {**LIMITS.model_dump(), "parallel": 1},
        "answers": [j.model_dump() for j in jobs],
    }
    res = sb.run(
        ["python3", f"/sandbox/{WORKER_NAME}"],
        files={WORKER_NAME: worker_source()},
        stdin=json.dumps(batch).encode(),
        limits=Limits(timeout_s=120, memory_mb=1024, max_output_bytes=20_000_000),
        result_channel=True,
    )
    assert res.returncode == 0, res
    got = {}
    for line in (res.result or b"").splitlines():
        rec = json.loads(line)
        if "id" in rec:
            got[rec["id"]] = (rec.get("status"), rec.get("results"))
    assert got == {
        "good-a": ("ok", [{"v": [3.0, 0.0]}, {"v": [5.0, 0.0]}]),
        "hostile": ("ok", [{"v": [-12345.0, 0.0]}] * 2),
        "counting": ("ok", [{"v": [0.0, 0.0]}] * 2),  # no pipe of another process opened
    }, got
