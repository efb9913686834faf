"""Checks on an agent's tool calls before they run (protocol mode "tools"): the arguments against
the command's JSON schema. A failed check is a tool error the agent sees and can correct.

Counts and lengths are checked first, in time independent of the arguments' size (`size_errors`),
and the schema walk, which visits every item, runs off the event loop (`checked_arguments`): a
call of 4,000,000 inputs took 49 s of schema walking on the server's loop before the target
service refused its count (issue 49)."""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from jsonschema import Draft202012Validator

from interp_harness.agents.host_protocol import MAX_TOOL_CALLS
from interp_harness.agents.toolspec import RAW_ARGUMENTS, ToolSpec

__all__ = [
    "MAX_TOOL_CALLS",
    "argument_errors",
    "checked_arguments",
    "size_errors",
]  # MAX_TOOL_CALLS: one message's, as the host's
_MAX_PROBLEMS = 5  # schema violations listed in one tool error


# validators by spec: the specs are the records' constants, so this holds a few dozen, each
# built once instead of on every call (the pair keeps the spec alive, so its id is not reused)
_VALIDATORS: dict[int, tuple[ToolSpec, Draft202012Validator]] = {}


def _validator(spec: ToolSpec) -> Draft202012Validator:
    found = _VALIDATORS.get(id(spec))
    if found is None or found[0] is not spec:
        found = _VALIDATORS[id(spec)] = (spec, Draft202012Validator(spec.parameters))
    return found[1]


def argument_errors(spec: ToolSpec, arguments: dict[str, Any]) -> str:
    """What is wrong with `arguments` for `spec` ("" when they fit its schema), short enough to
    show the agent."""
    raw = arguments.get(RAW_ARGUMENTS)
    if len(arguments) == 1 and isinstance(raw, str):  # what the model wrote was no JSON object
        return f"not a JSON object: {raw[:200]!r}"
    problems = []
    for e in _validator(spec).iter_errors(arguments):
        where = "/".join(str(p) for p in e.absolute_path) or "arguments"
        problems.append(f"{where}: {e.message[:200]}")
        if len(problems) >= _MAX_PROBLEMS:
            break
    return "; ".join(problems)


@functools.lru_cache(maxsize=1)
def call_bounds() -> tuple[int, int]:
    """(inputs per call, characters per input): the target service's limits
    (HARNESS_SERVICE_MAX_INPUTS, _MAX_INPUT_CHARS), which it enforces again."""
    from interp_harness.function_store.service.settings import ServiceSettings

    s = ServiceSettings()
    return s.max_inputs, s.max_input_chars


def size_errors(spec: ToolSpec, arguments: dict[str, Any]) -> str:
    """Too many inputs, or one too long, for a command that becomes a target call ("" when
    neither), in the service's words; touches at most the service's count of items."""
    if spec.kind != "call" or not spec.words:
        return ""
    max_inputs, max_chars = call_bounds()
    n = 0  # the words `to_words` makes
    for w in spec.words:
        value = arguments.get(w.arg) if w.arg is not None else None
        if w.literal is not None:
            n += 1
        elif value is not None:
            n += (w.flag is not None) + (len(value) if isinstance(value, list) else 1)
    if n > max_inputs:
        return f"too many inputs: {n} in one call, the limit is {max_inputs}"
    k = 0
    for w in spec.words:
        value = arguments.get(w.arg) if w.arg is not None else None
        for x in value if isinstance(value, list) else (value,):
            k += 1
            if isinstance(x, str) and len(x) > max_chars:
                return f"input {k} is {len(x)} characters long, the limit is {max_chars}"
    return ""


async def checked_arguments(spec: ToolSpec, arguments: dict[str, Any]) -> str:
    """`size_errors`, then `argument_errors` in a worker thread (it visits every item)."""
    known = len(spec.parameters.get("properties", {}))
    if len(arguments) > known + 1:  # a dict of millions of keys (+1: _raw_arguments)
        return f"{len(arguments)} arguments; {spec.name} takes at most {known}"
    if problems := size_errors(spec, arguments):
        return problems
    return await asyncio.to_thread(argument_errors, spec, arguments)
