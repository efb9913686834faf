"""A claimed run made ready to execute: its plan read back, its targets loaded, its episodes
stored (one per target, idempotently), and the ones still to run or score queued in memory."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from interp_harness.function_store.models import Target
from interp_harness.harness.domain.agent_class import planned_agent_class
from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.policy import profile_for
from interp_harness.harness.runs.plan import stored_agent_path
from interp_harness.harness.store.models import EPISODE_TERMINAL, Episode, Run
from interp_harness.harness.store.repo import Store

# An agent class's `waits_for(episode, wake)`: what an unfinished episode waits for before it may
# take an execution slot (None: nothing; `wake` is called when the wait is over). The agent
# `external` waits for its MCP client (harness/mcp/agent.py).
WaitsFor = Callable[[Episode, Callable[[], None]], str | None]


@dataclass
class RunState:
    """What a scheduler holds in memory for a run it executes."""

    run_id: str
    spec: RunSpec
    agent_class: str | None  # the plan's import path (None: resolve spec.agent)
    provider: str  # the agent's provider: per-provider concurrency limits
    targets: dict[str, Target]
    pending: deque[Episode] = field(default_factory=deque)
    active: dict[str, asyncio.Task[Any]] = field(default_factory=dict)
    cancelled: bool = False
    lost: bool = False  # the lease is gone: its episodes stop here without recording anything
    waits_for: WaitsFor | None = None  # the agent class's, if it has one


async def load_run(store: Store, catalogs: CatalogCache, run: Run) -> RunState:
    """The run's state from its stored plan. Raises when the run cannot start (its agent class
    or a target cannot be loaded)."""
    spec = RunSpec.model_validate(run.spec)
    path = stored_agent_path(store, run.id)
    agent_cls = planned_agent_class(spec, path)
    # the operator may have removed the agent's provider profile since the run was planned:
    # the run cannot start then (each episode's executor reads the profile again)
    profile_for(agent_cls, spec.agent_options)
    catalog = catalogs.get(spec.gen_seed)
    # loading a catalog can take seconds (find-gen): keep serving other runs meanwhile
    targets = await asyncio.to_thread(lambda: {tid: catalog.get(tid) for tid in run.target_ids})
    provider = getattr(agent_cls, "provider", "local") or "local"
    waits_for = getattr(agent_cls, "waits_for", None)
    return RunState(run.id, spec, path, provider, targets, waits_for=waits_for)


def store_episodes(store: Store, run: Run, rs: RunState) -> None:
    """One episode per (epoch, target), in run order (kept when they exist already: a resumed
    run). Epoch e's episode of the i-th target has idx e * len(targets) + i, so an episode's
    epoch is `episode_epoch` of its idx and needs no column of its own."""
    with_ex = rs.spec.protocol.method != "interactive"
    targets = rs.targets
    n = len(run.target_ids)
    store.episodes.ensure(
        run.id,
        (
            {
                "idx": epoch * n + i,
                "target_id": tid,
                "dataset": targets[tid].dataset,
                "family": targets[tid].family,
                "variant": targets[tid].variant,
                "exemplar_init": with_ex and bool(targets[tid].exemplars),
            }
            for epoch in range(rs.spec.epochs)
            for i, tid in enumerate(run.target_ids)
        ),
    )


def queue_pending(store: Store, rs: RunState, *, scoring: bool) -> None:
    """Queue the episodes that have not ended, and (with `scoring`) the ended ones not scored."""
    for ep in store.episodes.of_run(rs.run_id):
        unscored = ep.status in ("completed", "budget_exhausted") and not ep.scored
        if ep.status not in EPISODE_TERMINAL or (unscored and scoring):
            rs.pending.append(ep)
