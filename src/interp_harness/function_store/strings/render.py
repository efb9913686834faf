"""Ground-truth text for a string program: runnable Python code and an English description.

The code is assembled from the sources of our own atomic implementations (plus the helpers they
use), so it is exactly what the runner executes; it defines `function(string)` like FIND's files.
The description is generated from the definition (no LM): one sentence per atomic function,
composed as "first ..., then ...".
"""

from __future__ import annotations

import inspect
import re
from functools import cache

from interp_harness.function_store.strings import atomic, numwords
from interp_harness.function_store.strings.program import Step, StringProgram
from interp_harness.function_store.strings.registry import ATOMIC

_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_MODULES = (numwords, atomic)


@cache
def _definitions() -> dict[str, str]:
    """Name -> source text of every function and constant the atomic functions may use."""
    defs: dict[str, str] = {}
    for mod in _MODULES:
        for name, obj in vars(mod).items():
            if name.startswith("__") or getattr(obj, "__module__", mod.__name__) != mod.__name__:
                continue
            if inspect.isfunction(obj):
                defs[name] = inspect.getsource(obj)
            elif isinstance(obj, str | tuple | dict) and name.isupper():
                defs[name] = f"{name} = {obj!r}\n"
    return defs


def _closure(roots: list[str], defs: dict[str, str]) -> list[str]:
    """Names needed by `roots`, dependencies first (a stable, deterministic order)."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        for ident in _IDENT.findall(defs[name]):
            if ident in defs and ident != name:
                visit(ident)
        order.append(name)

    for r in roots:
        visit(r)
    return order


def _call(step: Step) -> str:
    if step.stochastic:
        return f"{step.name}(string, random)"  # fresh randomness on every call, like FIND
    return f"{step.name}({', '.join(['string', *map(repr, step.args)])})"


def render_code(program: StringProgram, canary: str = "") -> str:
    defs = _definitions()
    names = _closure([s.name for s in program.steps], defs)
    head = [f"# ground truth ({canary})" if canary else "# ground truth", "import random", ""]
    body = [defs[n].rstrip() + "\n" for n in names]
    if program.kind == "atomic":
        tail = f"def function(string):\n    return {_call(program.steps[0])}\n"
    else:
        inner, outer = program.steps
        tail = (
            f"def function1(string):\n    return {_call(outer)}\n\n\n"
            f"def function2(string):\n    return {_call(inner)}\n\n\n"
            "def function(string):\n    return function1(function2(string))\n"
        )
    return "\n".join(head) + "\n" + "\n\n".join(body) + "\n\n" + tail


def describe_step(step: Step) -> str:
    return ATOMIC[step.name].describe(step.args)


def render_description(program: StringProgram) -> str:
    if program.kind == "atomic":
        return f"The function {describe_step(program.steps[0])}."
    inner, outer = program.steps
    return f"The function first {describe_step(inner)}; then, on that result, it {describe_step(outer)}."
