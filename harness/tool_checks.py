"""Checks on an agent's tool calls before they run (protocol mode "tools"): the arguments against
the command's JSON schema. A failed check is a tool error the agent sees and can correct."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator

from agents.toolspec import ToolSpec

MAX_TOOL_CALLS = 64  # tool calls in one assistant message
_MAX_PROBLEMS = 5  # schema violations listed in one tool error


@lru_cache(maxsize=256)
def _validator(schema: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(schema))


def argument_errors(spec: ToolSpec, arguments: dict[str, Any]) -> str:
    """What is wrong with `arguments` for `spec` ("" when they fit its schema), short enough to
    show the agent."""
    problems = []
    for e in _validator(json.dumps(spec.parameters, sort_keys=True)).iter_errors(arguments):
        where = "/".join(str(p) for p in e.absolute_path) or "arguments"
        problems.append(f"{where}: {e.message[:200]}")
        if len(problems) >= _MAX_PROBLEMS:
            break
    return "; ".join(problems)
