"""Inspect AI's own CLI in a subprocess, and the logs it wrote (the Inspect task tests of every
family)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from inspect_ai.log import EvalLog, read_eval_log

from support import HOSTED, ROOT

SCRIPTS = HOSTED / "inspect_scripts.py"  # the scripted solvers (tests/hosted)


def inspect_cli(args: list[str], tmp: Path, log_dir: Path, extra_env: dict[str, str] | None = None):
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "TMPDIR": str(tmp),
        "HARNESS_DATA_DIR": os.environ["HARNESS_DATA_DIR"],
        **(extra_env or {}),
    }
    proc = subprocess.run(
        ["inspect", *args, "--log-dir", str(log_dir), "--display", "plain"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def logs(log_dir: Path) -> dict[str, EvalLog]:
    out = {}
    for f in sorted(log_dir.glob("*.eval")):
        log = read_eval_log(str(f))
        out[log.eval.task] = log
    return out
