"""The public API for plugin authors: everything an agent, a benchmark family, its runner, scorer
and panel need, and nothing else. Import from here (`from interp_harness.sdk import Agent`);
every other module of `interp_harness` is internal and may change.

Names load on first use (PEP 562), so each sandbox imports only the part its code needs: an agent
in its agent host reaches `interp_harness.agents` alone, a runner in the target service the
targets part alone. The table below is the whole API; tests/system/architecture/test_sdk_surface.py checks it against `__all__`, the
docs and the toy plugin.
"""

# ruff: noqa: F401 - the TYPE_CHECKING imports at the end are re-exports for type checkers
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> the internal module that defines it
_WHERE: dict[str, str] = {
    # agents: what an interpreter subclasses and returns (runs in the agent host)
    "Agent": "interp_harness.agents.base",
    "AgentError": "interp_harness.agents.base",
    "AgentOptions": "interp_harness.agents.base",
    "AgentReply": "interp_harness.agents.base",
    "Message": "interp_harness.agents.base",
    "Usage": "interp_harness.agents.base",
    "ToolCall": "interp_harness.agents.toolspec",
    "ToolSpec": "interp_harness.agents.toolspec",
    "parse_pairs": "interp_harness.agents.protocol",
    "parse_value": "interp_harness.agents.protocol",
    # protocol modes `code` and `code-tools`: an agent's cells and the replies its lab sends
    "RUN_PYTHON": "interp_harness.agents.protocol.cells",
    "CellReply": "interp_harness.agents.protocol.cells",
    "cell_block": "interp_harness.agents.protocol.cells",
    "cell_stdouts": "interp_harness.agents.protocol.cells",
    "cells_sent": "interp_harness.agents.protocol.cells",
    "parse_cells": "interp_harness.agents.protocol.cells",
    "get_agent": "interp_harness.agents.registry",
    "list_agents": "interp_harness.agents.registry",
    "register_agent": "interp_harness.agents.registry",
    # benchmark families: the record, its targets and their runner (runs in the target service)
    "Benchmark": "interp_harness.function_store.benchmark",
    "ReportRow": "interp_harness.function_store.benchmark",
    "register_benchmark": "interp_harness.function_store.benchmark",
    "Target": "interp_harness.function_store.models",
    "PublicMeta": "interp_harness.function_store.models",
    "HiddenTruth": "interp_harness.function_store.models",
    "CallOutput": "interp_harness.function_store.models",
    "make_canary": "interp_harness.function_store.models",
    # FIND's two commands (call the target, submit the answer): what protocol modes `tools`,
    # `code` and `code-tools` and MCP offer; a family without commands runs in the text modes only
    "find_commands": "interp_harness.function_store.commands",
    "Runner": "interp_harness.function_store.runtime",
    "RuntimeContext": "interp_harness.function_store.runtime",
    "register_runner": "interp_harness.function_store.runtime",
    # scoring and the episode page (run in the orchestrator)
    "Scorer": "interp_harness.evaluator.scorer",
    "ScoringContext": "interp_harness.evaluator.scorer",
    "ScoreResult": "interp_harness.evaluator.api",
    "EpisodeStats": "interp_harness.evaluator.api",
    "parse_answer": "interp_harness.evaluator.parsing",
    "func_name_tolerant": "interp_harness.agents.protocol.answer",
    # agent code run in the scoring sandbox (`ScoringContext.run_code`); the result format is
    # documented on CodeResult
    "CodeJob": "interp_harness.evaluator.sandbox_exec",
    "CodeResult": "interp_harness.evaluator.sandbox_exec",
    "Panel": "interp_harness.evaluator.panel",
    "PanelView": "interp_harness.evaluator.panel",
    "Rendered": "interp_harness.evaluator.panel",
    "html_template": "interp_harness.evaluator.panel",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"interp_harness.sdk has no {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # what type checkers and editors see; at run time the table above decides
    from interp_harness.agents.base import (
        Agent,
        AgentError,
        AgentOptions,
        AgentReply,
        Message,
        Usage,
    )
    from interp_harness.agents.protocol import parse_pairs, parse_value
    from interp_harness.agents.protocol.answer import func_name_tolerant
    from interp_harness.agents.protocol.cells import (
        RUN_PYTHON,
        CellReply,
        cell_block,
        cell_stdouts,
        cells_sent,
        parse_cells,
    )
    from interp_harness.agents.registry import get_agent, list_agents, register_agent
    from interp_harness.agents.toolspec import ToolCall, ToolSpec
    from interp_harness.evaluator.api import EpisodeStats, ScoreResult
    from interp_harness.evaluator.panel import Panel, PanelView, Rendered, html_template
    from interp_harness.evaluator.parsing import parse_answer
    from interp_harness.evaluator.sandbox_exec import CodeJob, CodeResult
    from interp_harness.evaluator.scorer import Scorer, ScoringContext
    from interp_harness.function_store.benchmark import Benchmark, ReportRow, register_benchmark
    from interp_harness.function_store.commands import find_commands
    from interp_harness.function_store.models import (
        CallOutput,
        HiddenTruth,
        PublicMeta,
        Target,
        make_canary,
    )
    from interp_harness.function_store.runtime import Runner, RuntimeContext, register_runner
