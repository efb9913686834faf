"""Running one episode in the current process: the local executor (`LocalExecutor`, in the
scheduler's event loop) and what a Ray worker does for a task. One code path, so that both give
the same results."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from interp_harness.agents.base import Agent
from interp_harness.harness.agent_host.errors import agent_traceback, creation_error
from interp_harness.harness.domain.agent_class import planned_agent_class
from interp_harness.harness.episode.context import EpisodeContext, ScoreHook
from interp_harness.harness.episode.runner import LOST, EpisodeRunner
from interp_harness.harness.executors.base import EpisodeJob, RunControl
from interp_harness.harness.lab.limits import LabLimits
from interp_harness.harness.lab.turns import sandboxed_labs
from interp_harness.harness.policy import agent_kwargs, profile_for
from interp_harness.harness.providers.profiles import ProviderProfile
from interp_harness.harness.settings import Settings
from interp_harness.harness.store.models import EPISODE_TERMINAL, Episode
from interp_harness.harness.store.repo import Store
from interp_harness.harness.target_client import TargetClient

if TYPE_CHECKING:
    from interp_harness.harness.agent_host.host import AgentHosts

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
    agent class itself in this process. An agent class that `runs_in_orchestrator` (it holds no
    secret and runs no agent code: `external`, a rendezvous with an MCP client) is built here for
    its episode whatever the isolation (docs/security.md)."""
    if getattr(agent_cls, "runs_in_orchestrator", False):
        return agent_cls(**agent_kwargs(options, profile), episode_id=ep.id)
    if settings.agent_isolation == "none":
        return agent_cls(**agent_kwargs(options, profile))
    # the host gets the profile's key and endpoint in its environment, not in its options
    client = hosts().client(agent_cls, options, profile)
    if ep.status not in EPISODE_TERMINAL:  # a completed episode only needs scoring
        await client.start()
    return client


async def execute_episode(
    ctx: EpisodeContext, ep: Episode, new_agent: Callable[[], Awaitable[Agent]]
) -> str:
    """Run (or resume) `ep` to its end and score it; returns its final status (`LOST` when
    `ctx.owns()` says this process no longer holds the run: nothing more is recorded then).
    `new_agent` builds the episode's agent here, so that a failure to build it is recorded as
    the episode's error."""
    store = ctx.store
    try:
        agent = await new_agent()
    except Exception as e:
        if not ctx.owns():
            return LOST
        store.episodes.start(ep.id, ep.run_id)
        store.episodes.finish(
            ep.id,
            ep.run_id,
            status="error",
            end_reason="agent_error",
            error_category=getattr(e, "category", "agent"),
            error=creation_error(e),
            traceback=agent_traceback(e),
        )
        return "error"
    status = LOST
    try:
        status = await EpisodeRunner(ctx, ep, agent).run()
        return status
    finally:
        ended = getattr(agent, "episode_ended", None)
        if ended is not None and status != LOST:  # answers the client's last request
            final = store.episodes.get(ep.id, with_answer=False)
            reason = f"{status} ({final.end_reason})" if final and final.end_reason else status
            ended(reason, store.episodes.messages(ep.id))
        try:
            await agent.aclose()
        except Exception:
            log.exception("agent.aclose failed")


def job_agent(job: EpisodeJob) -> tuple[type, ProviderProfile | None]:
    """The job's agent class (as its run's plan names it) and its provider profile."""
    agent_cls = planned_agent_class(job.spec, job.agent_class)
    return agent_cls, profile_for(agent_cls, job.spec.agent_options)


class LocalExecutor:
    """Runs episodes in this event loop: agents in sandboxed agent hosts started here, target
    calls through `client` (this process's target services)."""

    def __init__(
        self,
        store: Store,
        client: TargetClient,
        settings: Settings,
        *,
        hosts: Callable[[], AgentHosts] | None = None,
    ) -> None:
        """`hosts`: agent hosts someone else keeps (a Ray worker's, across its tasks); by default
        this executor starts its own and stops them in `aclose`."""
        self.store, self.client, self.settings = store, client, settings
        self._hosts: AgentHosts | None = None
        self._shared_hosts = hosts

    def connect(self) -> None:
        """Nothing to reach."""

    def hosts(self) -> AgentHosts:
        if self._shared_hosts is not None:
            return self._shared_hosts()
        if self._hosts is None:
            from interp_harness.harness.agent_host.host import AgentHosts

            self._hosts = AgentHosts(
                memory_mb=self.settings.agent_memory_mb,
                max_message_chars=self.settings.agent_max_message_chars,
            )
        return self._hosts

    async def run(
        self, job: EpisodeJob, score_hook: ScoreHook | None, control: RunControl | None = None
    ) -> str:
        ep = self.store.episodes.get(job.episode_id)
        if ep is None:
            raise LookupError(f"episode {job.episode_id} is not in the store")
        agent_cls, profile = job_agent(job)
        options = job.spec.agent_options
        limits = LabLimits.from_settings(self.settings)
        ctx = EpisodeContext(
            store=self.store,
            target=job.target,
            spec=job.spec,
            client=self.client,
            score_hook=score_hook,
            step_timeout_s=self.settings.agent_step_timeout_s,
            lab_limits=limits,
            lab_factory=sandboxed_labs(limits),  # labs run in this process's sandboxes
            should_stop=control.cancelled if control is not None else (lambda: False),
            owns=control.owns if control is not None else (lambda: True),
        )
        return await execute_episode(
            ctx, ep, lambda: make_agent(self.settings, self.hosts, agent_cls, options, profile, ep)
        )

    async def prewarm(self, target_ids: list[str]) -> None:
        prewarm = getattr(self.client, "prewarm", None)
        if prewarm is not None:
            await prewarm(target_ids)

    async def aclose(self) -> None:
        """Stops the agent hosts; the target client belongs to whoever passed it in."""
        if self._hosts is not None:
            self._hosts.close()
            self._hosts = None
