"""`ScoringContext.run_code` as the SDK documents it (`CodeJob`, `CodeResult`): a scorer written
against the SDK alone runs an answer's code in the bubblewrap scoring sandbox and gets, per input,
the records `CodeResult`'s docstring and docs/architecture.md ("A scorer") describe. The expected
records below are written from that text, not read from the worker."""

from __future__ import annotations

import math

from interp_harness.harness.sandbox.code_runner import run_in_sandbox
from interp_harness.sdk import CodeJob, CodeResult, ScoringContext, func_name_tolerant

NUMBER = """
import math
def helper(x):
    return x
def f(x):
    if x == 0:
        raise ZeroDivisionError("division by zero")
    if x == 3:
        return "three"
    if x == 4:
        return complex(1, -2)
    if x == 5:
        return math.inf
    return helper(x) / 2
"""

TEXT = """
def g(s):
    if s == "n":
        return 42
    if s == "long":
        return "y" * 100_001
    if s == "boom":
        raise KeyError("boom")
    return s.upper()
"""


def _run(ctx: ScoringContext, *jobs: CodeJob) -> list[CodeResult]:
    return ctx.run_code(list(jobs))


def test_a_scorer_gets_the_documented_records_from_run_code(needs_bwrap) -> None:  # type: ignore[no-untyped-def]
    ctx = ScoringContext(code_runner=run_in_sandbox)
    number = CodeJob(
        id="n", code=NUMBER, func_name=func_name_tolerant(NUMBER), kind="number",
        inputs=["7.0", "0", "3", "4", "5", "-1"],
    )  # fmt: skip
    text = CodeJob(
        id="t", code=TEXT, func_name=func_name_tolerant(TEXT), kind="text",
        inputs=["Ab", "n", "long", "boom"],
    )  # fmt: skip
    bad = CodeJob(id="b", code="x = 1\n", func_name=func_name_tolerant("x = 1\n"), kind="text",
                  inputs=["a"])  # fmt: skip
    n, t, b = _run(ctx, number, text, bad)
    assert (number.func_name, text.func_name, bad.func_name) == ("f", "g", None)

    # kind "number": [real, imag] for every number, real ones included; errors as text
    assert (n.id, n.status) == ("n", "ok")
    assert n.results[0] == {"v": [3.5, 0.0]}
    assert n.results[1] == {"err": "ZeroDivisionError: division by zero"}
    assert set(n.results[2]) == {"err"} and "three" in n.results[2]["err"]
    assert n.results[3] == {"v": [1.0, -2.0]}
    assert n.results[4] == {"v": [math.inf, 0.0]}
    assert n.results[5] == {"v": [-0.5, 0.0]}
    assert [n.value(i) for i in range(6)] == [3.5, None, None, complex(1, -2), math.inf, -0.5]

    # kind "text": the string; a non-string is never converted; a long one is cut and flagged
    assert (t.id, t.status) == ("t", "ok")
    assert t.results[0] == {"v": "AB"}
    assert t.results[1] == {"nonstr": "int", "repr": "42"}
    assert t.results[2] == {"v": "y" * 100_000, "truncated": True}
    assert t.results[3] == {"err": "KeyError: 'boom'"}
    assert [t.value(i) for i in range(4)] == ["AB", None, None, None]
    assert t.value(9) is None  # past the inputs

    # no function in the code: the job is an error with its reason, nothing run
    assert (b.status, b.results) == ("error", [])
    assert b.reason


def test_without_a_code_runner_every_job_is_an_infrastructure_error() -> None:
    job = CodeJob(
        id="x", code="def f(s):\n    return s\n", func_name="f", kind="text", inputs=["a"]
    )
    [r] = ScoringContext().run_code([job])
    assert (r.status, r.results) == ("infrastructure", [])
