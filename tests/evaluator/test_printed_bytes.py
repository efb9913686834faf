"""What agent code prints is counted in full, in the real bwrap scoring sandbox (issue 29 §2).

Real GPT-4 answers often print at module level. The scoring child used to leave with `os._exit`
before Python's stdout buffer was flushed, so a score said `printed_bytes: 0` for 101 bytes
printed, and 20,000 for 20,001 (the large write went through, the trailing newline stayed in the
buffer)."""

import shutil

import pytest
from support.evaluator_helpers import numeric_target

from interp_harness.evaluator.numeric.scorer import score_numeric_batch
from interp_harness.evaluator.parsing import parse_answer
from interp_harness.evaluator.sandbox_exec import CodeJob, CodeLimits, ExecSettings, run_code_jobs
from interp_harness.evaluator.scorer import EvalSettings, Item
from interp_harness.harness.sandbox.code_runner import run_in_sandbox

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")


def _answer(prelude: str) -> str:
    return f"[CODE]: ```python\n{prelude}\ndef f(x):\n    return x + 1\n```"


def test_module_level_print_is_counted_in_the_score() -> None:
    target = numeric_target("plus-one-printing", lambda x: x + 1.0)
    items = [
        Item(target, parse_answer(_answer("print('x' * 100)"))),  # 101 bytes with the newline
        Item(target, parse_answer(_answer("print('y' * 20_000)"))),  # 20,001 bytes
        Item(target, parse_answer(_answer("import sys\nsys.stderr.write('z' * 7)"))),
    ]
    out = score_numeric_batch(
        items, settings=EvalSettings(cpu_s=2, wall_s=5), runner=run_in_sandbox
    )
    scores = [dict((s.metric, s) for s in per_item) for per_item in out]
    for s in scores:  # printing does not change the score
        assert s["code_success"].value == 1.0
    assert [s["code_success"].details["printed_bytes"] for s in scores] == [101, 20_001, 7]


def _run(code: str, output_bytes: int) -> object:
    job = CodeJob(id="a", code=code, func_name="f", kind="number", inputs=["1"])
    (res,) = run_code_jobs(
        [job],
        runner=run_in_sandbox,
        limits=CodeLimits(cpu_s=2, wall_s=5, output_bytes=output_bytes),
        settings=ExecSettings(sandbox="bwrap"),
    )
    return res


def test_output_cap_accounting() -> None:
    """Exactly the cap is not over it; one byte more is, and what is counted stops at the cap."""
    at_cap = _run("print('a' * 99)\ndef f(x):\n    return x", output_bytes=100)
    assert at_cap.status == "ok"
    assert (at_cap.printed_bytes, at_cap.output_capped) == (100, False)
    over = _run("print('a' * 100)\ndef f(x):\n    return x", output_bytes=100)
    assert over.printed_bytes == 100 and over.output_capped is True
    # printed from inside the function, after the answer was loaded: counted too
    inside = _run("def f(x):\n    print('b' * 9)\n    return x", output_bytes=100)
    assert inside.status == "ok" and (inside.printed_bytes, inside.output_capped) == (10, False)
