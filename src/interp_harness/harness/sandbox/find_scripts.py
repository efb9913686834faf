"""The harness's `ScriptSandbox` for function_store's FIND release checks: a folder's scripts are
target code, so they run in a backend of the sandbox registry (bwrap), never on the host
(docs/security.md)."""

from __future__ import annotations

from collections.abc import Sequence

from interp_harness.function_store.find_import import (
    SCRIPT,
    ScriptSandboxUnavailable,
    default_python,
    set_script_sandbox,
)
from interp_harness.harness.sandbox.base import Limits, SandboxError, get_sandbox


class ScriptsInSandbox:
    """Runs `python3 function_code.py ARGS...` in a fresh sandbox of the registry's `backend`
    (argv list, no shell): a backend that runs commands with this Python (bwrap)."""

    def __init__(self, backend: str = "bwrap") -> None:
        self.backend = backend

    def run_script(self, source: bytes, args: Sequence[str], timeout_s: float) -> str:
        try:
            sandbox = get_sandbox(self.backend)
        except SandboxError as e:
            raise ScriptSandboxUnavailable(str(e)) from e
        res = sandbox.run(
            [default_python(), f"/sandbox/{SCRIPT}", *args],  # cwd is the sandbox's /tmp
            files={SCRIPT: source},
            limits=Limits(timeout_s=timeout_s, memory_mb=2048),
        )
        return res.stdout.decode("utf-8", errors="replace")


def install_script_sandbox() -> None:
    """Wire the bwrap script sandbox into function_store (where the harness builds catalogs)."""
    set_script_sandbox(ScriptsInSandbox("bwrap"))
