"""Checks on an agent's tool calls before they run (protocol mode "tools"): the arguments against
the command's JSON schema. A failed check is a tool error the agent sees and can correct."""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

from interp_harness.agents.host_protocol import MAX_TOOL_CALLS
from interp_harness.agents.toolspec import RAW_ARGUMENTS, ToolSpec

__all__ = ["MAX_TOOL_CALLS", "argument_errors"]  # MAX_TOOL_CALLS: one message's, as the host's
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
