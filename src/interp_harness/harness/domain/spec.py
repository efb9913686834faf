"""What a run is asked to do: agent, target selection, protocol options and budgets.

Stored as JSON in `runs.spec`; the same model is the body of `POST /runs` and what `harness run`
builds from its options, so both entry points validate input identically.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from interp_harness.evaluator.report import EpochReducer

# "tools": the benchmark's commands offered as tools (native tool calls; MCP for agent external)
# "code": the text protocol plus a Python lab, whose cells are the message's ```python blocks;
# "code-tools": the tools plus the lab's `run_python` (docs/code-mode.md)
ProtocolMode = Literal["default", "find-compat", "tools", "code", "code-tools"]
CODE_MODES = ("code", "code-tools")
TOOL_MODES = ("tools", "code-tools")
# EpochReducer (interp_harness.evaluator.report): how a target's repeated samples are reduced to one score
MAX_EPOCHS = 20  # each epoch is a whole episode per target: a caller multiplies work at most 20x
# FIND's three interpretation methods (Schwettmann et al. 2023, §4.3): plain interactive;
# interactive with the exemplar hint appended (FIND's --hints); one round on the exemplars,
# MILAN-like (FIND's --single_round).
Method = Literal["interactive", "exemplars", "single_round"]


class Budgets(BaseModel):
    """Per-episode limits. Exhausting one ends the episode with status budget_exhausted."""

    model_config = ConfigDict(extra="forbid")

    # Assistant messages per episode. FIND's default is 20; its loop allows 21 (`round_count > 20`),
    # which protocol mode "find-compat" reproduces by granting one extra round.
    max_rounds: int = Field(20, ge=1, le=500)
    max_target_calls: int | None = Field(None, ge=1, le=100_000)
    # inputs per episode over all its target calls: a call that would pass it is refused (the
    # agent is told and may answer); the floor runs sample this many inputs (harness/runs/plan.py)
    max_inputs: int | None = Field(None, ge=1, le=10_000_000)
    max_tokens: int | None = Field(None, ge=1, le=100_000_000)
    max_wall_s: float | None = Field(None, gt=0, le=7 * 24 * 3600)


class ProtocolOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: ProtocolMode = "default"
    method: Method = "interactive"


MAX_JSON_DEPTH = 32
MAX_OPTIONS_CHARS = 64_000  # agent_options as JSON: every built-in agent needs well under 1 kB


def check_json_value(value: Any, where: str = "", depth: int = 0) -> None:
    """Raise ValueError unless `value` is plain JSON every store and client accepts: finite
    numbers, strings that are valid Unicode (no lone surrogates), bounded nesting."""
    if depth > MAX_JSON_DEPTH:
        raise ValueError(f"{where or 'body'}: nested deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(
                f"{where or 'body'}: not valid Unicode (a lone surrogate such as \\ud800)"
            ) from None
    elif isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{where or 'body'}: {value} is not a finite number")
    elif isinstance(value, dict):
        for k, v in value.items():
            check_json_value(k, where, depth + 1)
            check_json_value(v, f"{where}.{k}" if where else str(k), depth + 1)
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            check_json_value(v, f"{where}[{i}]", depth + 1)


_NAME = {"min_length": 1, "max_length": 200}
TargetId = Annotated[str, Field(min_length=1, max_length=200)]


class RunSpec(BaseModel):
    """A request for a run (body of POST /runs)."""

    model_config = ConfigDict(extra="forbid")

    agent: str = Field(..., **_NAME, description="registered name, pkg.mod:Class, or entry point")
    agent_options: dict[str, Any] = Field(
        default_factory=dict, description="checked against the agent's `Options` schema"
    )
    dataset: str = Field(..., **_NAME, description="find-v1 | find-gen | find-import | ...")
    family: str | None = Field(None, **_NAME)
    variant: str | None = Field(None, **_NAME)
    ids: list[TargetId] | None = Field(
        None,
        min_length=1,  # an empty list is a mistake, not "the whole dataset"
        max_length=100_000,
        description="explicit target ids (overrides family/variant); omit for a selection",
    )
    limit: int | None = Field(None, ge=1, le=100_000)
    seed: int | None = Field(
        None,
        ge=-(2**63),
        lt=2**63,
        description="seed of the sample of `limit` targets; none: the first `limit`",
    )
    gen_seed: int = Field(0, ge=0, lt=2**32, description="find-gen generator seed")
    protocol: ProtocolOptions = Field(default_factory=ProtocolOptions)
    budgets: Budgets = Field(default_factory=Budgets)
    epochs: int = Field(
        1,
        ge=1,
        le=MAX_EPOCHS,
        description="episodes per target (repeated samples of a stochastic agent); the report "
        "reduces each target's epochs with `epoch_reducer` before averaging over targets",
    )
    epoch_reducer: EpochReducer = Field(
        "mean", description="mean | max | at_least_one (1 if any epoch succeeded)"
    )
    floor: bool = Field(
        True,
        description="also run the floor agents (e.g. `interpolation`) that the selected "
        "targets' benchmarks name, on those targets (a second run, linked by its floor_for; the "
        "report shows both)",
    )
    floor_for: str | None = Field(
        None,
        max_length=200,
        description="set by the server on a floor run: the id of the run it is the floor of",
    )

    @model_validator(mode="before")
    @classmethod
    def _plain_json(cls, data: Any) -> Any:
        # NaN, Infinity and lone surrogates parse as JSON in Python but break the stores
        # (PostgreSQL JSONB, SQLite text) and strict clients: refuse them at the boundary
        check_json_value(data)
        if isinstance(data, dict) and isinstance(data.get("agent_options"), dict):
            size = len(json.dumps(data["agent_options"], separators=(",", ":")))
            if size > MAX_OPTIONS_CHARS:
                raise ValueError(
                    f"agent_options: {size} characters as JSON; at most {MAX_OPTIONS_CHARS}"
                )
        return data


def spec_epochs(spec: dict[str, Any] | None) -> int:
    """A stored run's epochs (runs stored before epochs existed have 1)."""
    return int((spec or {}).get("epochs") or 1)


def episode_epoch(idx: int, n_targets: int) -> int:
    """The epoch of a run's episode `idx` (interp_harness.harness.runs.prepare.store_episodes lays them out)."""
    return idx // n_targets if n_targets else 0


def episode_total(run_spec: dict[str, Any] | None, target_ids: list[str]) -> int:
    """How many episodes a run has: one per target and epoch."""
    return len(target_ids) * spec_epochs(run_spec)
