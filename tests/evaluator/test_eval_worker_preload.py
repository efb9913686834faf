"""The scoring worker preloads scipy only for batches whose code names it: a child then finds
scipy.signal already imported (no ~1 s import inside its CPU limit); other batches skip the
import. Through the real bwrap sandbox."""

import shutil

import pytest

from interp_harness.evaluator.sandbox_exec import CodeJob, CodeLimits, ExecSettings, run_code_jobs
from interp_harness.harness.sandbox.code_runner import run_in_sandbox

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")

# 1.0 when scipy.signal was imported before the answer ran (the name is split so that this
# answer's own code does not name the module)
_PROBE = "import sys\ndef f(x):\n    return float(('sc' + 'ipy.signal') in sys.modules)\n"
_USES_SCIPY = "import scipy.special\ndef f(x):\n    return float(scipy.special.expit(0.0))\n"


def _run(codes: list[str]) -> list[list[dict]]:
    jobs = [
        CodeJob(id=str(i), code=c, func_name="f", kind="number", inputs=["0"])
        for i, c in enumerate(codes)
    ]
    res = {
        r.id: r
        for r in run_code_jobs(
            jobs, limits=CodeLimits(), settings=ExecSettings(), runner=run_in_sandbox
        )
    }
    assert all(r.status == "ok" for r in res.values()), res
    return [res[str(i)].results for i in range(len(codes))]


def test_scipy_is_not_imported_for_a_batch_that_does_not_name_it() -> None:
    assert _run([_PROBE]) == [[{"v": [0.0, 0.0]}]]


def test_scipy_is_preloaded_for_a_batch_whose_code_names_it() -> None:
    assert _run([_PROBE, _USES_SCIPY]) == [[{"v": [1.0, 0.0]}], [{"v": [0.5, 0.0]}]]
