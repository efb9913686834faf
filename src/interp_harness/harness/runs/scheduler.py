"""The scheduler: claims runs and hands their episodes to an executor within concurrency limits.

Runs: queued -> running -> completed | failed | cancelled. Episodes: queued -> running ->
completed | budget_exhausted | error (with a category) | cancelled.

- Limits: at most `max_concurrency` episodes at once, and at most `provider_limits[p]` for agents
  whose `Agent.provider` is p.
- Fairness: free slots are handed out round-robin between runs, one episode per run per turn, so
  a large run cannot starve a small one submitted after it.
- Waiting without a slot: an episode whose agent class says it waits for someone (`waits_for`:
  the agent `external`, for its MCP client's first request) is passed over until then, so a
  client that never comes holds no slot; the run view says what it waits for.
- Crash safety: all state lives in the store. On start the scheduler picks up every queued or
  running run; episodes left "running" by a killed process resume from their last stored step.
- Ownership: several processes may share a store (`harness run`, `harness serve`, Ray drivers);
  a run is executed by the one process holding its lease (harness/runs/leases.py).
- A run ends "failed" when it cannot start (agent or targets cannot be loaded) or when every
  episode ended in error; otherwise "completed" (harness/runs/finish.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.episode.context import ScoreHook
from interp_harness.harness.episode.runner import LOST
from interp_harness.harness.executors.base import EpisodeJob, Executor
from interp_harness.harness.executors.local import LocalExecutor
from interp_harness.harness.runs.finish import final_status
from interp_harness.harness.runs.leases import Leases, lease_free, new_owner_id
from interp_harness.harness.runs.prepare import (
    RunState,
    load_run,
    queue_pending,
    store_episodes,
)
from interp_harness.harness.settings import Settings
from interp_harness.harness.store.models import EPISODE_TERMINAL, RUN_TERMINAL, Episode, Run
from interp_harness.harness.store.repo import Store
from interp_harness.harness.target_client import TargetClient

log = logging.getLogger(__name__)


class _Control:
    """An episode's view of its run in this scheduler (executors.base.RunControl)."""

    def __init__(self, sched: Scheduler, rs: RunState) -> None:
        self.sched, self.rs = sched, rs

    def cancelled(self) -> bool:
        return self.rs.cancelled

    def owns(self) -> bool:
        return not self.rs.lost and self.sched.leases.owns(self.rs.run_id)


@dataclass(frozen=True)
class RunActivity:
    """What a scheduler is doing for one run now (`Scheduler.activity`), for a progress view."""

    preparing: bool  # loading its targets, storing its episodes, starting its target services
    in_flight: frozenset[str]  # episode ids an executor holds: starting, running or scoring
    slots_used: int  # episodes in flight across every run of this scheduler
    slots: int  # max_concurrency


class Scheduler:
    def __init__(
        self,
        store: Store,
        client: TargetClient,
        *,
        settings: Settings | None = None,
        catalogs: CatalogCache | None = None,
        score_hook: ScoreHook | None = None,
        only_runs: set[str] | None = None,
        executor: Executor | None = None,
        owner: str | None = None,
    ) -> None:
        """`executor`: where episodes run (interp_harness.harness.services picks HARNESS_EXECUTOR's); by default
        in this event loop, with target calls through `client`."""
        self.store, self.client = store, client
        self.settings = settings or Settings()
        self.catalogs = catalogs or CatalogCache()
        self.score_hook = score_hook
        self.only_runs = only_runs  # CLI: work on these runs only
        self.max_concurrency = self.settings.max_concurrency
        self.provider_limits = self.settings.provider_limit_map
        self._runs: dict[str, RunState] = {}
        self._order: list[str] = []  # round-robin order of run ids
        self._rr = 0
        self._provider_active: dict[str, int] = {}
        self._active = 0
        self._wake = asyncio.Event()
        self._main: asyncio.Task[None] | None = None
        self._keeper: asyncio.Task[None] | None = None
        self._stopping = False
        self.owner = owner or new_owner_id()
        self.lease_s = self.settings.run_lease_s
        self.leases = Leases(store, self.owner, self.lease_s)
        self._preparing: set[str] = set()
        self._dropped: list[RunState] = []  # lost runs whose episode tasks are still ending
        self.on_episode_end: Callable[[str, str], None] | None = None
        self.executor: Executor = executor or LocalExecutor(store, client, self.settings)

    # ---- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        self._main = asyncio.create_task(self._loop(), name="scheduler")
        self._keeper = asyncio.create_task(self._keep_leases(), name="scheduler-leases")

    async def stop(self) -> None:
        """Stop working; running episodes stay "running" in the store and resume next start.
        The leases of the runs held are released: another process may take them over at once."""
        self._stopping = True
        states = list(self._runs.values()) + self._dropped
        tasks = [t for rs in states for t in rs.active.values()]
        for t in tasks:
            t.cancel()
        loops = [t for t in (self._main, self._keeper) if t is not None]
        for t in loops:
            t.cancel()
        await asyncio.gather(*tasks, *loops, return_exceptions=True)
        try:
            self.leases.release(list(self._runs) + list(self._preparing))
        except Exception:  # the leases then run out by themselves
            log.exception("releasing the run leases failed")
        await self.executor.aclose()

    def wake(self) -> None:
        self._wake.set()

    async def _loop(self) -> None:
        while not self._stopping:
            try:
                await self._refresh()
                self._dispatch()
            except Exception:  # keep serving other runs; the failure is logged
                log.exception("scheduler iteration failed")
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=self.settings.poll_interval_s)
            except TimeoutError:
                pass
            self._wake.clear()

    def holds(self, run_id: str) -> bool:
        """Whether this scheduler is executing `run_id` (or still ending its episodes)."""
        return (
            run_id in self._runs
            or run_id in self._preparing
            or any(rs.run_id == run_id and rs.active for rs in self._dropped)
        )

    def activity(self, run_id: str) -> RunActivity:
        """What this scheduler is doing for `run_id` now (nothing, once it is done with it)."""
        rs = self._runs.get(run_id)
        warming = rs is not None and run_id not in self._order and not rs.cancelled
        return RunActivity(
            preparing=run_id in self._preparing or warming,
            in_flight=frozenset(rs.active) if rs is not None else frozenset(),
            slots_used=self._active,
            slots=self.max_concurrency,
        )

    # ---- leases -----------------------------------------------------------------------------
    async def _keep_leases(self) -> None:
        while not self._stopping:
            await asyncio.sleep(self.lease_s / 3)
            try:
                self._renew()
            except Exception:  # the fence stops the episodes if this keeps failing
                log.exception("renewing run leases failed")

    def _renew(self) -> None:
        for run_id in self.leases.renew(set(self._runs) | self._preparing):
            rs = self._runs.get(run_id)
            if rs is None:
                continue  # still preparing: _prepare sees the lease gone
            run = self.store.runs.get(run_id)
            if run is not None and run.status == "cancelled":
                self._cancel_in_memory(run_id)
            elif not rs.cancelled:
                self._drop(rs)

    def _drop(self, rs: RunState) -> None:
        """The run's lease is lost (taken over after it expired, or the run ended elsewhere):
        stop its episodes here without recording anything; the new owner resumes them."""
        log.warning("run %s: lease lost; its episodes stop in this process", rs.run_id)
        rs.lost = True
        rs.pending.clear()
        self._forget(rs)
        for t in rs.active.values():
            t.cancel()
        if rs.active:
            self._dropped.append(rs)

    def _forget(self, rs: RunState) -> None:
        if self._runs.get(rs.run_id) is rs:
            del self._runs[rs.run_id]
            self.leases.forget(rs.run_id)
            if rs.run_id in self._order:
                self._order.remove(rs.run_id)

    # ---- runs -------------------------------------------------------------------------------
    async def _refresh(self) -> None:
        active = {r.id: r for r in self.store.runs.active()}
        for run_id, rs in list(self._runs.items()):
            run = active.get(run_id) or self.store.runs.get(run_id)
            if run is not None and run.status == "cancelled":  # cancelled by another process
                self._cancel_in_memory(run_id)
            elif run is None or run.status in RUN_TERMINAL or run.owner != self.owner:
                if not rs.cancelled:
                    self._drop(rs)
        self._dropped = [rs for rs in self._dropped if rs.active]
        # episodes of cancelled runs that nobody holds any more (their owner died meanwhile)
        self.store.runs.sweep_cancelled()
        for run in active.values():
            if self.holds(run.id) or (self.only_runs and run.id not in self.only_runs):
                continue
            if not lease_free(run, self.owner):
                continue  # another process executes it
            if self.leases.claim(run.id):
                self._preparing.add(run.id)
                try:
                    await self._prepare(run)
                finally:
                    self._preparing.discard(run.id)

    async def _prepare(self, run: Run) -> None:
        try:
            rs = await load_run(self.store, self.catalogs, run)
        except Exception as e:
            log.warning("run %s cannot start: %s", run.id, e)
            error = f"{type(e).__name__}: {e}"
            self.store.runs.set_status(run.id, "failed", error=error, owner=self.owner)
            return
        store_episodes(self.store, run, rs)
        if run.status == "queued":
            self.store.runs.set_status(run.id, "running", owner=self.owner)
        queue_pending(self.store, rs, scoring=self.score_hook is not None)
        self._runs[run.id] = rs  # held (its lease renewed) while its targets warm up
        await self._prewarm(rs)
        if self._runs.get(run.id) is not rs:  # lost or cancelled while warming up
            return
        if not self.leases.held(run.id):
            self._drop(rs)
            return
        self._note_isolation(run.id)
        self._order.append(run.id)
        self._maybe_finish(rs)

    async def _prewarm(self, rs: RunState) -> None:
        """Start one target-service group for the run's pending targets before its episodes
        begin (otherwise each target cold-starts its own instance). A failure here is only
        logged: each episode's own call then reports it with its category."""
        ids = sorted({ep.target_id for ep in rs.pending})
        if not ids:
            return
        try:
            await self.executor.prewarm(ids)
        except Exception as e:
            log.warning("prewarming %d targets of run %s failed: %s", len(ids), rs.run_id, e)

    def _maybe_finish(self, rs: RunState) -> None:
        if rs.pending or rs.active or rs.lost:
            return
        self._forget(rs)
        if rs.cancelled:
            self.leases.release([rs.run_id])
            return
        status, error = final_status(self.store.episodes.counts(rs.run_id))
        self.store.runs.set_status(rs.run_id, status, error=error, owner=self.owner)

    def _note_isolation(self, run_id: str) -> None:
        if self.settings.agent_isolation == "none":
            log.warning("run %s: agents run IN THIS PROCESS (agent isolation none)", run_id)
            self.store.events.add(run_id, "agent_isolation", {"mode": "none", "isolated": False})

    # ---- dispatch -----------------------------------------------------------------------------
    def _limit(self, provider: str) -> int:
        return self.provider_limits.get(provider, self.max_concurrency)

    def _dispatch(self) -> None:
        launched = True
        while launched and self._active < self.max_concurrency and self._order:
            launched = False
            n = len(self._order)
            for i in range(n):
                if self._active >= self.max_concurrency:
                    break
                pos = (self._rr + i) % n
                rs = self._runs[self._order[pos]]
                if not rs.pending or rs.cancelled:
                    continue
                if self._provider_active.get(rs.provider, 0) >= self._limit(rs.provider):
                    continue
                ep = self._next_ready(rs)
                if ep is None:  # every pending episode waits for someone (an MCP client)
                    continue
                self._launch(rs, ep)
                launched = True
                self._rr = (pos + 1) % n
                break  # one episode per turn; the next turn starts at the next run

    def _next_ready(self, rs: RunState) -> Episode | None:
        """Take the run's first pending episode that waits for nothing (its agent class's
        `waits_for`): an episode waiting for its MCP client holds no slot meanwhile."""
        if rs.waits_for is None:
            return rs.pending.popleft()
        for i, ep in enumerate(rs.pending):
            # an ended episode only needs scoring: nobody to wait for
            if ep.status in EPISODE_TERMINAL or rs.waits_for(ep, self.wake) is None:
                del rs.pending[i]
                return ep
        return None

    def _launch(self, rs: RunState, ep: Episode) -> None:
        self._active += 1
        self._provider_active[rs.provider] = self._provider_active.get(rs.provider, 0) + 1
        task = asyncio.create_task(self._run_episode(rs, ep), name=f"episode-{ep.id}")
        rs.active[ep.id] = task

    async def _run_episode(self, rs: RunState, ep: Episode) -> None:
        status = "error"
        try:
            job = EpisodeJob(
                run_id=rs.run_id,
                episode_id=ep.id,
                spec=rs.spec,
                target=rs.targets[ep.target_id],
                settings=self.settings,
                owner=self.owner,
                agent_class=rs.agent_class,
            )
            status = await self.executor.run(job, self.score_hook, _Control(self, rs))
        except asyncio.CancelledError:
            status = "cancelled"
            if self._stopping:
                raise
            if rs.cancelled and not rs.lost:  # cancelled before its runner could record it
                self._finish_if_open(ep, status="cancelled", end_reason="cancelled")
        except Exception as e:  # a bug outside the runner: an infrastructure error, never a score
            log.exception("episode %s crashed", ep.id)
            if rs.lost:  # not ours to record any more
                return
            self._finish_if_open(
                ep,
                status="error",
                end_reason="exception",
                error_category="infrastructure",
                error=f"{type(e).__name__}: {e}",
            )
        finally:
            self._active -= 1
            self._provider_active[rs.provider] -= 1
            rs.active.pop(ep.id, None)
            if status == LOST and not rs.lost:  # its runner saw the lease too old to go on
                self._drop(rs)
            if not self._stopping and not rs.lost:
                if self.on_episode_end is not None:
                    self.on_episode_end(ep.id, status)
                self._maybe_finish(rs)
                self._wake.set()

    # ---- cancellation -----------------------------------------------------------------------
    def _finish_if_open(self, ep: Episode, **outcome: Any) -> None:
        """Record the episode's end unless the store already has one."""
        cur = self.store.episodes.get(ep.id)
        if cur is not None and cur.status not in EPISODE_TERMINAL:
            self.store.episodes.finish(ep.id, ep.run_id, **outcome)

    def cancel_run(self, run_id: str) -> bool:
        """Cancel a queued or running run (and its floor run, if it has one); False when it had
        already ended. Episodes nobody runs end as cancelled at once; those another process
        runs end there, when it sees the cancel in the store."""
        changed = self.store.runs.cancel(run_id)
        if changed:
            self._cancel_in_memory(run_id)
            floor = self.store.runs.floor(run_id)
            if floor is not None and self.store.runs.cancel(floor.id):
                self._cancel_in_memory(floor.id)
        return changed

    def _cancel_in_memory(self, run_id: str) -> None:
        rs = self._runs.get(run_id)
        if rs is None or rs.cancelled:
            return  # not ours: its owner (or the sweep, once its lease is over) ends its episodes
        rs.cancelled = True
        rs.pending.clear()
        for t in rs.active.values():
            t.cancel()
        # this run's episodes that are not running here (queued) are cancelled in the store
        for ep in self.store.episodes.of_run(run_id, status=("queued", "running")):
            if ep.id not in rs.active:
                self.store.episodes.finish(
                    ep.id, run_id, status="cancelled", end_reason="cancelled"
                )
        if not rs.active:
            self._maybe_finish(rs)

    # ---- helpers for in-process use (CLI, benchmarks) ---------------------------------------
    async def wait_run(self, run_id: str, poll_s: float = 0.1) -> Run:
        while True:
            run = self.store.runs.get(run_id)
            if run is None:
                raise KeyError(run_id)
            if run.status in RUN_TERMINAL:
                return run
            await asyncio.sleep(poll_s)
