"""The Ray executor: each episode is a Ray task on some worker of the cluster (docs/scale-out.md).

- Driver side (`RayExecutor`, in the scheduler's process): submits one task per episode with the
  resources HARNESS_RAY_EPISODE_* declare, and awaits its final status. The scheduler still
  decides what runs when, so per-provider limits stay global: one limiter, on the driver.
- Worker side (`run_episode_task`): runs the local executor (`executors.local.LocalExecutor`)
  against the shared PostgreSQL store. The agent runs in a
  sandboxed agent host (bwrap) started by the worker; target calls go to the node's target pool.
- Target pool per node (`NodeTargets`, a Ray actor pinned to its node): the warm pool of sandboxed
  target services of that node (bwrap or Docker on the worker), shared by every episode there.
- Ownership: the driver holds the run's lease in the store (harness/runs/leases.py). A worker reads
  the run's row before each step (`RunWatch`): it stops, recording nothing, once the driver no
  longer holds the lease (the driver died and another process took the run over), and it ends
  the episode as cancelled when the run was cancelled (by any process sharing the store).
- Worker loss: Ray's task retries (HARNESS_RAY_MAX_RETRIES) are the one mechanism. A retried
  task re-reads the episode from the store and resumes at its last stored step (the episode loop
  persists each step before the next), so nothing is lost or stored twice.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import ray
from ray.exceptions import RayActorError, RayError, RayTaskError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from interp_harness.function_store.models import CallOutput
from interp_harness.function_store.service.client import TargetServiceError
from interp_harness.harness.episode.context import ScoreHook
from interp_harness.harness.executors.base import EpisodeJob, ExecutorConfigError, RunControl
from interp_harness.harness.settings import Settings

log = logging.getLogger(__name__)

NAMESPACE = "interp-harness"
POOL_PREFIX = "harness-targets"


class WorkerLost(RuntimeError):
    """An episode's worker died more often than HARNESS_RAY_MAX_RETRIES allows."""

    category = "infrastructure"


def _cause(e: RayTaskError) -> BaseException:
    """The exception the remote code raised (Ray wraps it)."""
    return e.cause if isinstance(e.cause, BaseException) else e


# ---- the node's target pool ---------------------------------------------------------------------
@ray.remote(num_cpus=0, max_restarts=0)
class NodeTargets:
    """The warm pool of sandboxed target services on one node (an async actor: calls from many
    episodes run concurrently). Its sandboxes run on this node, like the local executor's."""

    def __init__(self, settings: Settings) -> None:
        from interp_harness.harness.domain.catalogs import CatalogCache
        from interp_harness.harness.target_client import make_target_client

        self.client = make_target_client(settings, CatalogCache())

    async def call(self, target_id: str, inputs: list[str]) -> list[CallOutput]:
        return await self.client.call(target_id, inputs)

    async def prewarm(self, target_ids: list[str]) -> None:
        prewarm = getattr(self.client, "prewarm", None)
        if prewarm is not None:
            await prewarm(target_ids)

    async def close(self) -> None:
        await self.client.aclose()


def node_targets(settings: Settings, pool: str, node_id: str) -> Any:
    """The target pool actor of `node_id` for executor `pool`, started there if it is not yet.

    Detached, so that it outlives the worker process that happened to start it (a killed worker
    must not take the node's pool with it); the driver stops it (`RayExecutor.aclose`)."""
    return NodeTargets.options(  # type: ignore[attr-defined]
        name=f"{pool}-{node_id}",
        namespace=NAMESPACE,
        get_if_exists=True,
        lifetime="detached",
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node_id, soft=False),
    ).remote(settings)


class NodeTargetsClient:
    """A TargetClient for episodes on a worker: calls go to the node's pool actor."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    async def call(self, target_id: str, inputs: Sequence[str]) -> list[CallOutput]:
        try:
            return await self.actor.call.remote(target_id, list(inputs))
        except RayTaskError as e:  # the pool's own error (its category decides who failed)
            raise _cause(e) from None
        except RayActorError as e:
            raise TargetServiceError(f"the node's target pool died: {e}", "infrastructure") from e

    async def aclose(self) -> None:
        """Nothing: the node's pool outlives the episode."""


# ---- worker side --------------------------------------------------------------------------------
@dataclass
class _WorkerState:
    """What a worker process keeps between the episodes it runs (per store URL)."""

    store: Any
    hosts: Any = None

    def agent_hosts(self, settings: Settings) -> Any:
        if self.hosts is None:
            from interp_harness.harness.agent_host.host import AgentHosts

            self.hosts = AgentHosts(
                memory_mb=settings.agent_memory_mb,
                max_message_chars=settings.agent_max_message_chars,
            )
            atexit.register(self.hosts.close)  # its temp dir, when Ray ends this worker
        return self.hosts


_WORKER: dict[str, _WorkerState] = {}


class RunWatch:
    """A worker's view of its run in the store, read at most every `every_s` seconds: whether
    it was cancelled, and whether `owner` (the driver) still holds its lease. A lease counts as
    held only while it has more than `every_s` left, so an answer stays true until the next
    read: a worker whose driver died stops before the run can be taken over."""

    def __init__(self, store: Any, run_id: str, owner: str | None, every_s: float) -> None:
        self.store, self.run_id, self.owner, self.every_s = store, run_id, owner, every_s
        self._at = -float("inf")
        self._state: tuple[str, bool] = ("running", True)

    def _read(self) -> tuple[str, bool]:
        now = time.monotonic()
        if now - self._at >= self.every_s:
            got = self.store.runs.lease(self.run_id, self.owner or "", self.every_s)
            self._state = ("missing", False) if got is None else got
            self._at = now
        return self._state

    def cancelled(self) -> bool:
        return self._read()[0] == "cancelled"

    def owns(self) -> bool:
        return self.owner is None or self._read()[1]


def _worker_state(settings: Settings) -> _WorkerState:
    if settings.url not in _WORKER:
        from interp_harness.harness.store.repo import open_store

        # the driver brought the schema up to date; workers only read and write
        _WORKER[settings.url] = _WorkerState(open_store(settings.url, upgrade=False))
    return _WORKER[settings.url]


async def _run_here(job: EpisodeJob, score_hook: ScoreHook | None, pool: str) -> str:
    from interp_harness.harness.executors.local import LocalExecutor

    settings = job.settings
    w = _worker_state(settings)
    if w.store.episodes.get(job.episode_id, with_answer=False) is None:
        raise LookupError(f"episode {job.episode_id} is not in the store")
    node = ray.get_runtime_context().get_node_id()
    # what ran where: one event per attempt (a retried episode has one per worker it ran on)
    w.store.events.add(
        job.run_id,
        "executor",
        {"executor": "ray", "node": node, "pid": os.getpid()},
        job.episode_id,
    )
    # the local executor's code path, with the node's target pool and the store's view of the run
    client = NodeTargetsClient(node_targets(settings, pool, node))
    here = LocalExecutor(w.store, client, settings, hosts=lambda: w.agent_hosts(settings))
    watch = RunWatch(w.store, job.run_id, job.owner, min(1.0, settings.run_lease_s / 10))
    return await here.run(job, score_hook, watch)


def run_episode_task(job: EpisodeJob, score_hook: ScoreHook | None, pool: str) -> str:
    """The Ray task: run (or resume) one episode on this worker; returns its final status."""
    return asyncio.run(_run_here(job, score_hook, pool))


# ---- driver side --------------------------------------------------------------------------------
class RayExecutor:
    """Runs episodes as Ray tasks on the cluster at HARNESS_RAY_ADDRESS."""

    def __init__(self, settings: Settings) -> None:
        if settings.url.startswith("sqlite"):
            raise ExecutorConfigError(
                "HARNESS_EXECUTOR=ray needs a PostgreSQL store that every worker can reach "
                "(HARNESS_DATABASE_URL=postgresql://user@host/db): a SQLite file lives on one "
                "machine"
            )
        self.settings = settings
        self.pool = f"{POOL_PREFIX}-{uuid.uuid4().hex[:8]}"  # this executor's node pools
        self._lock = threading.Lock()
        self._task: Any = None
        self._started_ray = False

    def connect(self) -> None:
        """Join the cluster (blocking; once). Raises ExecutorConfigError when there is none."""
        with self._lock:
            if self._task is not None:
                return
            if not ray.is_initialized():
                address = self.settings.ray_address
                try:
                    ray.init(
                        address=None if address == "local" else address,
                        namespace=NAMESPACE,
                        logging_level=logging.WARNING,
                        # workers' output stays in the cluster's log files: this process's
                        # stdout is the CLI's (`--json`)
                        log_to_driver=False,
                    )
                except ConnectionError as e:
                    raise ExecutorConfigError(
                        f"no Ray cluster at HARNESS_RAY_ADDRESS={address!r} ({e}); start one "
                        "with `ray start --head`, or set HARNESS_RAY_ADDRESS=local"
                    ) from e
                self._started_ray = True
            s = self.settings
            resources: dict[str, Any] = {"num_cpus": s.ray_episode_cpus}
            if s.ray_episode_gpus:
                resources["num_gpus"] = s.ray_episode_gpus
            if s.ray_episode_memory_mb:
                resources["memory"] = s.ray_episode_memory_mb * 2**20
            self._task = ray.remote(run_episode_task).options(
                **resources,
                max_retries=s.ray_max_retries,
                retry_exceptions=False,  # only a lost worker is retried; an error is a state
            )

    async def run(
        self, job: EpisodeJob, score_hook: ScoreHook | None, control: RunControl | None = None
    ) -> str:
        """`control` is not used: the worker reads the run's state from the store (RunWatch)."""
        await asyncio.to_thread(self.connect)
        ref = self._task.remote(job, score_hook, self.pool)
        try:
            return await ref
        except asyncio.CancelledError:
            # run cancelled or scheduler stopping: the episode stays where its store says
            ray.cancel(ref, force=True)
            raise
        except RayTaskError as e:  # the episode code itself raised on the worker
            raise _cause(e) from None
        except RayError as e:
            tries = self.settings.ray_max_retries + 1
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            raise WorkerLost(
                f"episode {job.episode_id}: its worker was lost {tries} times "
                f"({type(e).__name__}: {first})"
            ) from e

    async def prewarm(self, target_ids: list[str]) -> None:
        """Warm the run's targets in the pool of every live node (episodes may land anywhere)."""
        await asyncio.to_thread(self.connect)
        nodes = [n["NodeID"] for n in ray.nodes() if n.get("Alive")]
        actors = [node_targets(self.settings, self.pool, n) for n in nodes]
        await asyncio.gather(*(a.prewarm.remote(list(target_ids)) for a in actors))

    def _pool_actors(self) -> list[Any]:
        out = []
        for a in ray.util.list_named_actors(all_namespaces=True):
            if a["namespace"] == NAMESPACE and a["name"].startswith(self.pool + "-"):
                try:
                    out.append(ray.get_actor(a["name"], namespace=NAMESPACE))
                except ValueError:  # gone meanwhile
                    pass
        return out

    def _close(self) -> None:
        with self._lock:
            if self._task is None:
                return
            for actor in self._pool_actors():
                try:
                    ray.get(actor.close.remote(), timeout=60)
                except Exception as e:  # stop it anyway
                    log.warning("closing a node target pool failed: %s", e)
                ray.kill(actor)
            if self._started_ray:
                ray.shutdown()
            self._task = None

    async def aclose(self) -> None:
        await asyncio.to_thread(self._close)
