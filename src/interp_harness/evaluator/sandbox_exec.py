"""Running agent-written functions in the sandbox, in batches.

One sandbox start per chunk of answers (not per answer): the chunk goes to `sandbox_worker.py` on
stdin, which forks one guarded child per answer (see its docstring). Chunks run concurrently.
A sandbox that fails to start or dies leaves its unfinished answers as `infrastructure` errors;
an answer that misbehaves (loops, allocates, forks, prints) is a failure of that answer only.

Results come back on the sandbox's result channel only, which agent code cannot reach; the
sandbox's stdout and stderr, which it can write, are never parsed: stderr's tail appears in a
failure's text as a diagnostic, after the category was decided.

The sandbox itself is not ours: the evaluator owns the `CodeRunner` interface (run argv in a named
sandbox backend with a result channel) and the composition root passes an implementation in
(`interp_harness.harness.sandbox.code_runner.run_in_sandbox`), so this layer imports no harness code.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

WORKER_NAME = "worker.py"


class CodeLimits(BaseModel):
    """Per-answer limits inside the worker."""

    cpu_s: float = 2.0
    wall_s: float = 5.0
    memory_mb: int = 256
    output_bytes: int = 65_536  # what agent code may print (captured, then dropped)
    result_bytes: int = 4_000_000


class ExecSettings(BaseSettings):
    """`HARNESS_EVAL_*`: where and how agent code runs."""

    model_config = SettingsConfigDict(env_prefix="HARNESS_EVAL_")

    sandbox: str = "bwrap"  # bwrap | docker | inprocess | subprocess-unsafe (development only)
    python: str = sys.executable  # the interpreter the sandbox runs the worker with
    chunk_size: int = 100
    concurrency: int = Field(default_factory=lambda: max(1, min(4, os.cpu_count() or 1)))
    parallel_per_sandbox: int = 1


@dataclass(frozen=True)
class SandboxLimits:
    """Limits of one sandbox run (the whole worker, all its answers)."""

    timeout_s: float
    memory_mb: int
    cpu_s: int
    max_procs: int
    max_output_bytes: int


class SandboxOutcome(Protocol):
    """What a sandbox run returns (the fields scoring reads)."""

    returncode: int | None
    stderr: bytes
    timed_out: bool
    error: str | None
    result: bytes | None  # what the program wrote on its result channel


class CodeRunner(Protocol):
    """Runs `argv` (never through a shell) in sandbox `backend` with `files` readable at
    /sandbox/<name> and a result channel ($SANDBOX_RESULT_FD) only the program holds."""

    def __call__(
        self,
        backend: str,
        argv: list[str],
        *,
        files: dict[str, bytes],
        stdin: bytes,
        limits: SandboxLimits,
    ) -> SandboxOutcome: ...


class CodeJob(BaseModel):
    """One answer's code to run in the scoring sandbox (`ScoringContext.run_code`).

    `code` is exec'd in a fresh namespace and `func_name` (`func_name_tolerant(code)` finds the
    last top-level `def`) is called once per input, in order. `kind` says how: `"number"` calls
    it with `float(input)` and reads a number back; `"text"` calls it with the input string and
    reads a string back. `call="find-compat"` calls it as FIND's scripts do (the input pasted
    into the call's source). The result format is `CodeResult`'s.
    """

    id: str
    code: str
    func_name: str | None
    kind: Literal["number", "text"]  # how results are encoded and checked
    call: Literal["direct", "find-compat"] = "direct"
    inputs: list[str]


class CodeResult(BaseModel):
    """What one `CodeJob` gave. `status`: `"ok"` (the code loaded; `results` holds one record
    per input, in order), `"error"` (the code did not load or broke a limit: `reason` says
    which; `results` holds the inputs done before), `"infrastructure"` (the sandbox failed: an
    error state of the score, never a 0).

    One record per input (`sandbox_worker.py` `encode_numeric` / `encode_string` write them):
    - `{"err": "ValueError: ..."}`: that input raised, or (kind `"number"`) returned no number;
    - kind `"number"`: `{"v": [real, imag]}`, always two floats, also for a real result
      (`2.5` -> `{"v": [2.5, 0.0]}`; `nan` and `inf` as JSON's NaN and Infinity);
    - kind `"text"`: `{"v": "the string"}`; `{"v": "...", "truncated": True}` past 100,000
      characters; a return value that is not a `str` is never converted:
      `{"nonstr": "int", "repr": "42"}` (its type's name and its repr, cut to 200 characters).

    `value(i)` reads record `i` back as a Python value.
    """

    id: str
    status: Literal["ok", "error", "infrastructure"]
    reason: str | None = None
    results: list[dict[str, Any]] = Field(default_factory=list)  # one record per input (above)
    printed_bytes: int = 0
    output_capped: bool = False
    guard: str | None = None

    def value(self, i: int) -> float | complex | str | None:
        """Input `i`'s result: a float (a complex where the imaginary part is not 0) for kind
        `"number"`, the string for kind `"text"`; None where it raised, returned no number or a
        non-string, was cut, or was never run (`results[i]` says which)."""
        if i >= len(self.results):
            return None
        r = self.results[i]
        v = r.get("v")
        if r.get("truncated") or v is None:
            return None
        if isinstance(v, str):
            return v
        re_, im = v
        return complex(re_, im) if im else float(re_)


def worker_source() -> bytes:
    return resources.files("interp_harness.evaluator").joinpath("sandbox_worker.py").read_bytes()


def run_code_jobs(
    jobs: Sequence[CodeJob],
    *,
    runner: CodeRunner,
    limits: CodeLimits | None = None,
    settings: ExecSettings | None = None,
) -> list[CodeResult]:
    """Run every job in sandboxes started through `runner`; one result per job, in order."""
    limits = limits or CodeLimits()
    settings = settings or ExecSettings()
    todo = [j for j in jobs if j.func_name and j.code.strip()]
    out: dict[str, CodeResult] = {
        j.id: CodeResult(id=j.id, status="error", reason="no function found in the code")
        for j in jobs
        if not (j.func_name and j.code.strip())
    }
    chunks = [todo[i : i + settings.chunk_size] for i in range(0, len(todo), settings.chunk_size)]
    if chunks:
        with ThreadPoolExecutor(max_workers=settings.concurrency) as pool:
            for results in pool.map(lambda c: _run_chunk(c, runner, limits, settings), chunks):
                out.update({r.id: r for r in results})
    return [out[j.id] for j in jobs]


def _run_chunk(
    chunk: list[CodeJob], runner: CodeRunner, limits: CodeLimits, settings: ExecSettings
) -> list[CodeResult]:
    """Run a chunk; if the worker dies, find the answer that killed it.

    Agent code cannot reach the worker by design (seccomp, rlimits, strict pipe records), but if
    a worker dies anyway its unfinished answers must not turn into "infrastructure" errors that
    leave an answer out of the mean. Answers that were running at the death are re-run alone; one
    that kills a worker while running alone failed (score 0, with the reason); answers that never
    started are re-run. A sandbox that fails before starting anything is infrastructure."""
    out: dict[str, CodeResult] = {}
    batches: list[tuple[list[CodeJob], bool]] = [(chunk, False)]  # (jobs, running alone?)
    while batches:
        jobs, alone = batches.pop()
        got, started, err = _run_batch(jobs, runner, limits, settings)
        out.update(got)
        left = [j for j in jobs if j.id not in got]
        if not left:
            continue
        why = err or "the sandbox ended before this answer finished"
        running = [j for j in left if j.id in started]
        if not running:  # nothing of it ran: the sandbox itself failed
            out.update(
                {j.id: CodeResult(id=j.id, status="infrastructure", reason=why) for j in left}
            )
            continue
        if alone:
            (j,) = running
            out[j.id] = CodeResult(
                id=j.id, status="error", reason=f"the answer killed the scoring worker ({why})"
            )
            continue
        batches += [([j], True) for j in running]
        waiting = [j for j in left if j.id not in started]
        if waiting:
            batches.append((waiting, False))
    return [out[j.id] for j in chunk]


def _run_batch(
    jobs: list[CodeJob], runner: CodeRunner, limits: CodeLimits, settings: ExecSettings
) -> tuple[dict[str, CodeResult], set[str], str | None]:
    """One sandboxed worker over `jobs`: (finished results, ids that started, failure or None)."""
    batch = {
        "limits": {**limits.model_dump(), "parallel": settings.parallel_per_sandbox},
        "answers": [j.model_dump() for j in jobs],
    }
    payload = json.dumps(batch).encode()
    # the sandbox's own wall clock covers the worst case of every answer timing out
    per = max(limits.wall_s, limits.cpu_s + 1)
    total_s = 10 + per * len(jobs) / max(1, settings.parallel_per_sandbox)
    max_out = limits.result_bytes * len(jobs) + 65_536
    try:
        records, err = _launch(runner, payload, settings, total_s, limits, max_out)
    except Exception as e:  # the sandbox itself could not run
        err = f"sandbox failed: {type(e).__name__}: {e}"
        records = b""
    ids = {j.id for j in jobs}
    got: dict[str, CodeResult] = {}
    started: set[str] = set()
    for line in records.splitlines():
        try:
            rec = json.loads(line)
            if set(rec) == {"start"}:
                started.add(rec["start"])
            else:
                r = CodeResult(**rec)
                if r.id in ids:
                    got[r.id] = r
        except (ValueError, KeyError, TypeError, RecursionError):
            continue
    return got, started, err


def _launch(
    runner: CodeRunner,
    payload: bytes,
    settings: ExecSettings,
    total_s: float,
    limits: CodeLimits,
    max_out: int,
) -> tuple[bytes, str | None]:
    """(the worker's records, from its result channel; failure or None)."""
    argv = [settings.python, f"/sandbox/{WORKER_NAME}"]
    backend = settings.sandbox
    if backend == "subprocess-unsafe":
        warnings.warn(
            "running agent code WITHOUT a sandbox (subprocess-unsafe): development only",
            stacklevel=3,
        )
        backend = "inprocess"  # a plain subprocess, with a minimal environment all the same
    # the sandbox-wide memory cap must hold the worker plus the children running at once
    mem = 768 + limits.memory_mb * settings.parallel_per_sandbox
    res = runner(
        backend,
        argv,
        files={WORKER_NAME: worker_source()},
        stdin=payload,
        limits=SandboxLimits(
            timeout_s=total_s,
            memory_mb=mem,
            cpu_s=int(total_s) + 1,
            max_procs=settings.parallel_per_sandbox + 16,
            max_output_bytes=max_out,
        ),
    )
    failure = _describe_failure(res.returncode, res.stderr, res.timed_out, res.error)
    return res.result or b"", failure


def _describe_failure(
    rc: int | None, stderr: bytes, timed_out: bool, error: str | None
) -> str | None:
    if rc == 0 and not timed_out and not error:
        return None
    # the sandbox's stderr is writable by agent code: a labelled diagnostic, never a category
    tail = stderr[-500:].decode(errors="replace").strip()
    what = error or ("sandbox timed out" if timed_out else f"sandbox exited with status {rc}")
    return f"{what}; the sandbox's stderr ends: {tail}" if tail else what
