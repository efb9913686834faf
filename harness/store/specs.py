"""What a run is asked to do: agent, target selection, protocol options and budgets.

Stored as JSON in `runs.spec`; the same model is the body of `POST /runs` and what `harness run`
builds from its options, so both entry points validate input identically.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ProtocolMode = Literal["default", "find-compat"]
# FIND's three interpretation methods (paper §4.3 / spec §6.1): plain interactive; interactive with
# the exemplar hint appended (FIND's --hints); one round on the exemplars, MILAN-like
# (FIND's --single_round).
Method = Literal["interactive", "exemplars", "single_round"]


class Budgets(BaseModel):
    """Per-episode limits. Exhausting one ends the episode with status budget_exhausted."""

    model_config = ConfigDict(extra="forbid")

    # Assistant messages per episode. FIND's default is 20; its loop actually allows 21 (§6.4),
    # which protocol mode "find-compat" reproduces by granting one extra round.
    max_rounds: int = Field(20, ge=1, le=500)
    max_target_calls: int | None = Field(None, ge=1, le=100_000)
    max_tokens: int | None = Field(None, ge=1, le=100_000_000)
    max_wall_s: float | None = Field(None, gt=0, le=7 * 24 * 3600)


class ProtocolOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: ProtocolMode = "default"
    method: Method = "interactive"


class RunSpec(BaseModel):
    """A request for a run (body of POST /runs)."""

    model_config = ConfigDict(extra="forbid")

    agent: str = Field(
        ..., min_length=1, description="registered name, pkg.mod:Class, or entry point"
    )
    agent_options: dict[str, Any] = Field(default_factory=dict)
    dataset: str = Field(..., min_length=1, description="find-v1 | find-gen | find-import | ...")
    family: str | None = None
    variant: str | None = None
    ids: list[str] | None = Field(
        None, description="explicit target ids (overrides family/variant)"
    )
    limit: int | None = Field(None, ge=1, le=100_000)
    seed: int | None = Field(
        None, description="seed of the sample of `limit` targets; none: the first `limit`"
    )
    gen_seed: int = Field(0, description="find-gen generator seed")
    protocol: ProtocolOptions = Field(default_factory=ProtocolOptions)
    budgets: Budgets = Field(default_factory=Budgets)
    floor: bool = Field(
        True,
        description="also run the `interpolation` floor on the run's numeric targets (a second "
        "run, linked by its floor_for; the report shows both)",
    )
    floor_for: str | None = Field(
        None, description="set on a floor run: the id of the run it is the floor of"
    )
