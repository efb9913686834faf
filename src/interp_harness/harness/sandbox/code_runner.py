"""The evaluator's `CodeRunner` over this package's sandboxes: what the composition root passes to
scoring so that agent-written code runs in a bwrap / docker / remote sandbox without the evaluator
importing the harness."""

from __future__ import annotations

from dataclasses import asdict

from interp_harness.evaluator.sandbox_exec import SandboxLimits
from interp_harness.harness.sandbox.base import Limits, RunResult, get_sandbox


def run_in_sandbox(
    backend: str,
    argv: list[str],
    *,
    files: dict[str, bytes],
    stdin: bytes,
    limits: SandboxLimits,
) -> RunResult:
    """One run of `argv` in a fresh sandbox of `backend`, with a result channel."""
    return get_sandbox(backend).run(
        argv, files=files, stdin=stdin, limits=Limits(**asdict(limits)), result_channel=True
    )
