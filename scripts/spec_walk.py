"""The walk of a run spec through the orchestrator's modules while the run is admitted (issue 48).

Runs `harness run` in this process (find-gen numeric, the agent `scripted-numeric`, 2 targets,
the in-process sandbox and no score hook) under `sys.settrace`, from `execute_here`'s start until
the scheduler starts (episodes run after that and are not counted). It prints the modules of
`interp_harness.harness` and `interp_harness.function_store` that the spec passes through, in
order, and how many times execution returns to a module it had left.

What is counted: a frame's module, when it is one of ours. What is left out, so that the walk is
the spec's and not the machinery's: the calls that do not take the spec (building the services
and the executor, reading settings, the owner id), and everything below the first frame of
`function_store` or of the store (a catalog loading its targets, SQL), which counts as the
module entered. With `--refused` the spec is one that pre-flight refuses (a mistyped agent and
dataset): the walk then runs until `harness run` exits. Usage:
HARNESS_DATA_DIR=... python3 scripts/spec_walk.py [--refused]
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections import Counter

OURS = ("interp_harness.harness", "interp_harness.function_store")
OPAQUE = ("interp_harness.function_store", "interp_harness.harness.store")
NOT_THE_SPEC = {"build_services", "make_executor", "new_owner_id", "__init__", "_close"}
# the pieces of a spec's check: how many times each is asked, every call counted
PIECES = (
    "resolve_agent_class",
    "check_operator_options",
    "check_options",
    "check_no_secrets",
    "profile_for",
    "check_protocol_mode",
    "select_targets",
    "check_dataset",
    "plan_floors",
)


def short(module: str) -> str:
    name = module.removeprefix("interp_harness.")
    return "harness.store" if name.startswith("harness.store") else name


GOOD = {"agent": "scripted-numeric", "dataset": "find-gen", "family": "numeric", "limit": 2}
REFUSED = {"agent": "scripted-numerc", "dataset": "find-gne", "family": "numeric", "limit": 2}


def walk(fields: dict[str, object]) -> tuple[list[str], Counter[str]]:
    from interp_harness.harness.commands import run as run_cmd
    from interp_harness.harness.domain.spec import RunSpec
    from interp_harness.harness.runs.scheduler import Scheduler

    spec = RunSpec.model_validate(fields)
    seq: list[str] = []
    asked: Counter[str] = Counter()
    edges: set[tuple[object, object]] = set()
    # "before": execute_here not entered yet; a coroutine's frame fires "call" on every resume
    state: dict[str, object] = {"phase": "before", "skip": None}

    def note(module: str) -> None:
        here = short(module)
        if not seq or seq[-1] != here:
            seq.append(here)

    def tracer(frame, event, arg):  # type: ignore[no-untyped-def]
        code = frame.f_code
        if state["phase"] == "before" and code is run_cmd.execute_here.__code__:
            state["phase"] = "on"
        if code is Scheduler.start.__code__:
            state["phase"] = "after"
        if state["phase"] != "on" or state["skip"] is not None or event != "call":
            return None
        module = frame.f_globals.get("__name__", "")
        if code.co_name in PIECES and module.startswith(OURS):
            asked[code.co_name] += 1
        if code.co_name == "<module>" or (code.co_name in NOT_THE_SPEC and module.startswith(OURS)):
            state["skip"] = frame  # an import, or a call that does not take the spec
            return skip_tracer
        if not module.startswith(OURS):
            return None
        caller = frame.f_back
        while caller is not None and not caller.f_globals.get("__name__", "").startswith(OURS):
            caller = caller.f_back
        edge = (caller.f_code if caller is not None else None, code)
        if edge not in edges:  # a loop over targets or a poll counts once
            edges.add(edge)
            if caller is not None:
                note(caller.f_globals["__name__"])
            note(module)
        if module.startswith(OPAQUE):
            state["skip"] = frame
            return skip_tracer
        return None

    def skip_tracer(frame, event, arg):  # type: ignore[no-untyped-def]
        if event == "return" and frame is state["skip"]:
            state["skip"] = None
        return skip_tracer

    sys.settrace(tracer)
    try:
        asyncio.run(run_cmd.execute_here(spec, quiet=True, preflight=True))
    except Exception as e:  # the refused spec: `harness run` exits 2 (typer.Exit)
        if type(e).__name__ != "Exit":
            raise
    finally:
        sys.settrace(None)
    return seq, asked


def summary(seq: list[str]) -> tuple[int, int, Counter[str]]:
    entries = Counter(seq)
    returns = sum(n - 1 for n in entries.values())
    return len(entries), returns, entries


def main() -> None:
    home = tempfile.mkdtemp(prefix="spec-walk-")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{home}/walk.db")
    os.environ.setdefault("HARNESS_SANDBOX", "inprocess")
    os.environ.setdefault("HARNESS_SCORE_HOOK", "none")
    os.environ.setdefault("HARNESS_AGENT_ISOLATION", "none")
    seq, asked = walk(REFUSED if "--refused" in sys.argv[1:] else GOOD)
    modules, returns, entries = summary(seq)
    print(" -> ".join(seq))
    print(f"modules {modules}, returns to a module already left {returns}")
    for name, n in entries.most_common():
        print(f"  {n}  {name}")
    print("pieces asked: " + ", ".join(f"{k} x{asked[k]}" for k in PIECES if asked[k]))


if __name__ == "__main__":
    main()
