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

import shutil
import textwrap

import pytest
from evaluator_helpers import numeric_target

from evaluator.parsing import parse_answer
from evaluator.sandbox_exec import CodeJob, CodeLimits, ExecSettings, run_code_jobs
from evaluator.scoring import EvalSettings, Item, score_numeric_batch

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")

IDS = ["0", "1", "2", "3", "good-a", "hostile", "good-b", "wrong"]
FORGER = textwrap.dedent(f"""
    import glob, json, os

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


    def _write(path, data, flood=0):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            return 0
        wrote = 0
        try:
            os.write(fd, data)
            wrote = 1
            if flood:
                os.set_blocking(fd, True)
                junk = b"x" * 65535 + b"\\n"
                for _ in range(flood // len(junk)):
                    os.write(fd, junk)
                os.write(fd, data)  # the forged records again, after the flood
        except OSError:
            pass
        finally:
            os.close(fd)
        return wrote


    def attack(n):
        data = _records(n)
        me = str(os.getpid())
        hit = 0
        for path in ("/proc/1/fd/1", "/proc/1/fd/2"):
            hit += _write(path, data, flood=48 * 2**20)
        paths = [f"/proc/{{os.getppid()}}/fd/{{k}}" for k in range(256)]
        paths += glob.glob("/proc/[0-9]*/fd/*")
        for path in paths:
            if path.split("/")[2] != me:  # not our own result pipe: we stay a plain wrong answer
                hit += _write(path, data)
        return hit


    _done = []


    def f(x):
        if not _done:
            _done.append(attack(N_INPUTS))
        return WRONG
""")
PLAIN_WRONG = "def f(x):\n    return -12345.0\n"
GOOD = "def f(x):\n    return 2 * x\n"
SETTINGS = ExecSettings(sandbox="bwrap", chunk_size=50)
LIMITS = CodeLimits(cpu_s=2, wall_s=10, memory_mb=256)


def _forger(n_inputs: int) -> str:
    return FORGER.replace("N_INPUTS", str(n_inputs))


def _job(i: str, code: str) -> CodeJob:
    return CodeJob(id=i, code=code, func_name="f", kind="numeric", inputs=["1.5", "2.5"])


def test_forger_reaches_the_sandboxs_stdout() -> None:
    """The attack is real: the forger opens at least /proc/1/fd/1 (the sandbox's stdout)."""
    code = _forger(2).replace("return WRONG\n", "return float(_done[0])\n")
    (res,) = run_code_jobs([_job("hostile", code)], limits=LIMITS, settings=SETTINGS)
    assert res.status == "ok", res
    assert res.results[0]["v"][0] >= 1, res


def test_forged_records_change_no_result_in_a_batch() -> None:
    jobs = [_job("good-a", GOOD), _job("hostile", _forger(2)), _job("good-b", GOOD)]
    jobs.append(_job("wrong", PLAIN_WRONG))
    res = {r.id: r for r in run_code_jobs(jobs, limits=LIMITS, settings=SETTINGS)}
    for good in ("good-a", "good-b"):
        assert res[good].status == "ok", res[good]
        assert res[good].results == [{"v": [3.0, 0.0]}, {"v": [5.0, 0.0]}], res[good]
    wrong = [{"v": [-12345.0, 0.0]}] * 2
    assert res["wrong"].status == "ok" and res["wrong"].results == wrong, res["wrong"]
    assert res["hostile"].status == "ok" and res["hostile"].results == wrong, res["hostile"]
    assert res["hostile"].reason is None


def test_forged_records_change_no_result_alone() -> None:
    (res,) = run_code_jobs([_job("hostile", _forger(2))], limits=LIMITS, settings=SETTINGS)
    assert res.status == "ok" and res.results == [{"v": [-12345.0, 0.0]}] * 2, res


def _code_scores(items: list[Item]) -> list[tuple]:
    out = score_numeric_batch(items, settings=EvalSettings(cpu_s=2, wall_s=10))
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
