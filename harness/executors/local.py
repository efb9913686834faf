"""Running one episode in the current process: what the scheduler does itself (local executor)
and what a Ray worker does for a task. One code path, so that both give the same results."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from agents.base import Agent
from function_store.models import Target
from harness.episode import LOST, EpisodeRunner, ScoreHook
from harness.policy import agent_kwargs
from harness.providers import ProviderProfile
from harness.settings import Settings
from harness.store.models import EPISODE_TERMINAL, Episode
from harness.store.repo import Store
from harness.store.specs import RunSpec
from harness.target_client import TargetClient

if TYPE_CHECKING:
    from harness.agent_host import AgentHosts

log = logging.getLogger(__name__)


async def make_agent(
    settings: Settings,
    hosts: Callable[[], AgentHosts],
    agent_cls: type,
    options: dict[str, Any],
    profile: ProviderProfile | None,
    ep: Episode,
) -> Agent:
    """The episode's agent: a client of a sandboxed agent host started here (so that its start-up
    is not charged to the episode's wall time); or (agent_isolation "none", development only) the
    agent class itself in this process."""
    if settings.agent_isolation == "none":
        return agent_cls(**agent_kwargs(options, profile))
    # the host gets the profile's key and endpoint in its environment, not in its options
    client = hosts().client(agent_cls, options, profile)
    if ep.status not in EPISODE_TERMINAL:  # a completed episode only needs scoring
        await client.start()
    return client


async def execute_episode(
    store: Store,
    ep: Episode,
    target: Target,
    spec: RunSpec,
    new_agent: Callable[[], Awaitable[Agent]],
    client: TargetClient,
    score_hook: ScoreHook | None,
    should_stop: Callable[[], bool],
    *,
    owns: Callable[[], bool] | None = None,
    step_timeout_s: float | None = None,
) -> str:
    """Run (or resume) `ep` to its end and score it; returns its final status (`LOST` when
    `owns()` says this process no longer holds the run: nothing more is recorded then).
    `step_timeout_s`: the operator's bound on one agent step."""
    try:
        agent = await new_agent()
    except Exception as e:
        if owns is not None and not owns():
            return LOST
        store.start_episode(ep.id, ep.run_id)
        store.finish_episode(
            ep.id,
            ep.run_id,
            status="error",
            end_reason="agent_error",
            error_category=getattr(e, "category", "agent"),
            error=f"agent could not be created: {type(e).__name__}: {e}",
        )
        return "error"
    runner = EpisodeRunner(
        store,
        ep,
        target,
        spec,
        agent,
        client,
        score_hook,
        should_stop=should_stop,
        owns=owns,
        step_timeout_s=step_timeout_s,
    )
    try:
        return await runner.run()
    finally:
        try:
            await agent.aclose()
        except Exception:
            log.exception("agent.aclose failed")
