"""What an imported Inspect log may claim: the rules a live run's own values obey, applied to a file
anyone may have written (`harness import-inspect`).

A live episode's usage is bounded per agent message (interp_harness.agents.base.Usage: non-negative, finite, at
most MAX_MESSAGE_TOKENS tokens and MAX_MESSAGE_COST_USD per message) and its rounds by the
budgets; an imported episode's totals must fit what such an episode can reach. An exported run's
spec goes through `RunSpec`, less what only the operator may set (a secret, an endpoint, a file,
an agent by dotted path, the server's own floor_for): those are dropped, never stored. A stored
score's plot data (`agent_grid`) must be the shape the plot reads.
"""

from __future__ import annotations

import math
from typing import Any

from annotated_types import Le
from pydantic import BaseModel

from interp_harness.agents.base import MAX_MESSAGE_COST_USD, MAX_MESSAGE_TOKENS
from interp_harness.evaluator.numeric.grid import GridInvalid, check_grid
from interp_harness.harness.domain.spec import Budgets, RunSpec


def _le(model: type[BaseModel], field: str) -> int:
    """The `le` bound of `model.field` (one source of truth for the budgets' ceilings)."""
    return next(m.le for m in model.model_fields[field].metadata if isinstance(m, Le))


INT32_MAX = 2**31 - 1  # the store's counters are 32-bit in PostgreSQL
# the most assistant messages an episode can have: the rounds budget's ceiling, plus the extra
# round protocol mode find-compat grants
MAX_ROUNDS = _le(Budgets, "max_rounds") + 1
MAX_TARGET_CALLS = _le(Budgets, "max_target_calls")
MAX_EPISODE_TOKENS = MAX_ROUNDS * MAX_MESSAGE_TOKENS  # per kind (prompt, completion)
MAX_EPISODE_COST_USD = MAX_ROUNDS * MAX_MESSAGE_COST_USD
STAT_BOUNDS = {"rounds": MAX_ROUNDS, "target_calls": MAX_TARGET_CALLS, "inputs": INT32_MAX}
# agent options nobody but the operator sets, for any agent (interp_harness.agents.options, interp_harness.agents.replay)
_SECRET_OPTIONS = ("api_key",)


class Untrusted(ValueError):
    """A value of the log breaks the rules a live run obeys (the message says which, and why)."""


def count(value: Any, what: str, bound: int) -> int:
    """`value` as a counter: an int in [0, bound]; Untrusted otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise Untrusted(f"{what} is {_show(value)}, not a whole number")
    if not 0 <= value <= bound:
        raise Untrusted(f"{what} is {_show(value)}; a live episode's is between 0 and {bound:,}")
    return value


def amount(value: Any, what: str, bound: float) -> float:
    """`value` as a non-negative finite number at most `bound`; Untrusted otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Untrusted(f"{what} is {_show(value)}, not a number")
    if not math.isfinite(value) or not 0 <= value <= bound:
        raise Untrusted(f"{what} is {_show(value)}; a live episode's is between 0 and {bound:,}")
    return float(value)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def usage(model_usage: dict[str, Any]) -> tuple[int, int, float]:
    """(prompt tokens, completion tokens, cost in USD) of a sample's `model_usage` (by model), each
    within what a live episode can report; Untrusted otherwise."""
    prompt = completion = 0
    cost = 0.0
    for name, u in model_usage.items():
        where = f"usage of {_show(name)}"
        prompt += count(u.input_tokens, f"{where}: input_tokens", MAX_EPISODE_TOKENS)
        completion += count(u.output_tokens, f"{where}: output_tokens", MAX_EPISODE_TOKENS)
        if u.total_cost is not None:
            cost += amount(u.total_cost, f"{where}: total_cost", MAX_EPISODE_COST_USD)
    count(prompt, "input_tokens in all", MAX_EPISODE_TOKENS)
    count(completion, "output_tokens in all", MAX_EPISODE_TOKENS)
    amount(cost, "total_cost in all", MAX_EPISODE_COST_USD)
    return prompt, completion, cost


def score_value(value: Any, what: str) -> None:
    """A score's value: None (no value) or a finite number."""
    if value is not None and not math.isfinite(value):
        raise Untrusted(f"{what} is {value}, not a finite number")


def grid(details: dict[str, Any], what: str) -> None:
    """The score's `agent_grid` (the plot's line), when it has one: {x, y} of finite numbers,
    the same length, bounded; Untrusted otherwise."""
    if "agent_grid" not in details:
        return
    try:
        check_grid(details["agent_grid"])
    except GridInvalid as e:
        raise Untrusted(f"{what}: agent_grid {e}") from None


def exported_spec(raw: dict[str, Any], own_label: str | None = None) -> tuple[RunSpec, list[str]]:
    """An exported run's spec as this server may store and serve it, and what was dropped from
    it (names only: a value may be a secret). The agent is kept by name when it is not a dotted
    path (`pkg.mod:Class` names a module to import: the operator's choice), else relabelled; its
    options are kept only when this server knows the agent and they are ones an API caller may
    set (never a key, an endpoint or a file); floor_for, set by the server that ran it, goes.
    `own_label`: the label the importer itself gives this log's agent (`inspect:<model>`), kept
    as it is: a run imported before and exported again keeps its name."""
    data = dict(raw)
    dropped: list[str] = []
    if data.get("floor_for") is not None:
        data["floor_for"] = None
        dropped.append("floor_for")
    agent = data.get("agent")
    agent_cls = None
    if isinstance(agent, str):
        agent_cls = _known_agent(agent)
        if ":" in agent and agent_cls is None and agent != own_label:
            data["agent"] = f"{agent.replace(':', '/')[:180]} (imported)"
            dropped.append("agent (a dotted path: relabelled)")
    options = data.get("agent_options")
    if isinstance(options, dict) and options:
        allowed = _caller_options(agent_cls)
        data["agent_options"] = {k: v for k, v in options.items() if k in allowed}
        dropped += [f"agent_options.{k}" for k in options if k not in allowed]
    return RunSpec.model_validate(data), dropped


def _known_agent(name: str) -> type | None:
    """The agent class `name` names here without importing any module by path (the REST API's
    rule), else None."""
    from interp_harness.agents.registry import resolve_agent

    try:
        cls, _ = resolve_agent(name, allow_dotted=False)
    except Exception:  # unknown here, or a plugin that fails to load: nothing is kept for it
        return None
    return cls


def _caller_options(agent_cls: type | None) -> set[str]:
    """The option names an API caller may set for the agent (its `Options`, less the ones only
    the operator sets); none for an agent unknown here (which of its options are secrets or
    paths cannot be told)."""
    schema = getattr(agent_cls, "Options", None)
    if schema is None:
        return set()
    operator = set(getattr(schema, "operator_only", ())) | set(_SECRET_OPTIONS)
    return set(schema.model_fields) - operator
