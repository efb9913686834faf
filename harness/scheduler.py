"""The scheduler: turns runs into episodes and runs them within concurrency limits.

Runs: queued -> running -> completed | failed | cancelled. Episodes: queued -> running ->
completed | budget_exhausted | error (with a category) | cancelled.

- Limits: at most `max_concurrency` episodes at once, and at most `provider_limits[p]` for agents
  whose `Agent.provider` is p.
- Fairness: free slots are handed out round-robin between runs, one episode per run per turn, so
  a large run cannot starve a small one submitted after it.
- Crash safety: all state lives in the store. On start the scheduler picks up every queued or
  running run; episodes left "running" by a killed process resume from their last stored step.
- Ownership: several processes may share a store (`harness run`, `harness serve`, Ray drivers).
  A run is executed by the one process holding its lease (`Store.claim_run`: owner id and expiry,
  taken by one conditional UPDATE, renewed every third of HARNESS_RUN_LEASE_S). A process that
  cannot renew stops its episodes of that run (without recording anything) before its lease can
  run out, so that a process taking the run over after expiry never runs an episode at the same
  time as the old owner; it then resumes them from their last stored step.
- A run ends "failed" when it cannot start (agent or targets cannot be loaded) or when every
  episode ended in error; otherwise "completed".
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import random
import socket
import threading
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC
from typing import TYPE_CHECKING, Any

from agents.base import Agent
from function_store.catalog import Catalog, CatalogOptions
from function_store.models import Target
from harness.episode import LOST, ScoreHook, default_score_hook
from harness.executors import EpisodeJob, Executor, make_executor
from harness.executors.local import execute_episode, make_agent
from harness.policy import ApiPolicy, check_no_secrets, profile_for
from harness.providers import ProviderProfile
from harness.sandbox.find_scripts import install_script_sandbox
from harness.settings import Settings
from harness.store.models import EPISODE_TERMINAL, RUN_TERMINAL, Episode, Run, utcnow
from harness.store.repo import Store
from harness.store.specs import RunSpec
from harness.target_client import TargetClient

if TYPE_CHECKING:
    from harness.agent_host import AgentHosts

log = logging.getLogger(__name__)


class SelectionError(ValueError):
    """A run's request cannot be satisfied (unknown dataset/agent/target, empty selection)."""


# ---- agents ---------------------------------------------------------------------------------
def resolve_agent_class(spec: str, *, allow_dotted: bool = True) -> type:
    """The agent class for a spec (registry name, `pkg.mod:Class` or entry point). With
    `allow_dotted=False` (REST) a name that is not offered is refused before any import."""
    try:
        from agents.registry import resolve_agent
    except ImportError:  # registry not installed: dotted paths still work
        module, _, attr = spec.partition(":")
        if not attr or not allow_dotted:
            raise SelectionError(f"unknown agent {spec!r} (no agent registry installed)") from None
        return getattr(importlib.import_module(module), attr)
    try:
        cls, _ = resolve_agent(spec, allow_dotted=allow_dotted)
    except (ValueError, TypeError) as e:
        raise SelectionError(str(e)) from e
    return cls


# ---- selection ------------------------------------------------------------------------------
def select_targets(spec: RunSpec, catalog: Catalog) -> list[Target]:
    """The targets a run spec names, in run order. Raises SelectionError with what is wrong."""
    from function_store.catalog import UnknownDataset, UnknownTarget, dataset_names
    from function_store.datasets import DataUnavailable

    try:
        if spec.ids:
            targets = [catalog.get(i) for i in spec.ids]
            bad = [t.id for t in targets if t.dataset != spec.dataset]
            if bad:
                raise SelectionError(f"ids not in dataset {spec.dataset!r}: {', '.join(bad[:5])}")
            unavailable = [f"{t.id} ({t.unavailable_reason})" for t in targets if not t.available]
            if unavailable:
                raise SelectionError(f"targets unavailable: {'; '.join(unavailable[:5])}")
        else:
            if spec.dataset not in dataset_names():
                raise SelectionError(
                    f"unknown dataset {spec.dataset!r}; known: {', '.join(dataset_names())}"
                )
            targets = catalog.list(dataset=spec.dataset, family=spec.family, variant=spec.variant)
            targets = [t for t in targets if t.available]
    except (UnknownTarget, UnknownDataset, DataUnavailable) as e:
        raise SelectionError(str(e)) from e
    except ValueError as e:  # e.g. unknown family
        if isinstance(e, SelectionError):
            raise
        raise SelectionError(str(e)) from e
    if spec.limit is not None and spec.limit < len(targets):
        if spec.seed is None:
            targets = targets[: spec.limit]
        else:
            targets = random.Random(spec.seed).sample(targets, spec.limit)
    if not targets:
        what = ", ".join(
            f"{k}={v}"
            for k, v in (
                ("dataset", spec.dataset),
                ("family", spec.family),
                ("variant", spec.variant),
            )
            if v
        )
        raise SelectionError(f"empty selection: no available target matches {what}")
    if spec.protocol.method != "interactive":
        missing = [t.id for t in targets if not t.exemplars]
        if missing:
            raise SelectionError(
                f"method {spec.protocol.method!r} needs exemplars, but {len(missing)} selected "
                f"targets have none (e.g. {missing[0]}); exemplars exist for entities and relations"
            )
    return targets


class CatalogCache:
    """Catalogs by find-gen seed, least recently used first out beyond `max_seeds` (a catalog
    holds a generated find-gen set, ~20 MB; an API caller can name any seed)."""

    def __init__(self, max_seeds: int = 4) -> None:
        install_script_sandbox()  # FIND folder release checks run their scripts in bwrap
        self.max_seeds = max_seeds
        self._by_seed: OrderedDict[int, Catalog] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, gen_seed: int = 0) -> Catalog:
        with self._lock:
            if gen_seed in self._by_seed:
                self._by_seed.move_to_end(gen_seed)
                return self._by_seed[gen_seed]
            catalog = self._by_seed[gen_seed] = Catalog(CatalogOptions(gen_seed=gen_seed))
            while len(self._by_seed) > self.max_seeds:
                self._by_seed.popitem(last=False)
            return catalog

    def seeds(self) -> list[int]:
        with self._lock:
            return list(self._by_seed)


FLOOR_AGENT = "interpolation"


def resolve_checked_agent(spec: RunSpec, policy: ApiPolicy | None) -> type:
    """The run's agent class; with the REST API's `policy`, only after its spec fields, the
    agent name and the options passed the policy (RequestInvalid otherwise)."""
    if policy is None:
        return resolve_agent_class(spec.agent)
    policy.check_spec_fields(spec.floor_for)
    agent_cls = resolve_agent_class(spec.agent, allow_dotted=policy.allow_dotted_agents)
    policy.check_options(agent_cls, spec.agent_options)
    return agent_cls


def create_run(
    store: Store,
    spec: RunSpec,
    catalogs: CatalogCache,
    *,
    policy: ApiPolicy | None = None,
    owner: str | None = None,
    lease_s: float | None = None,
) -> Run:
    """Validate a run request and store it as queued. Raises SelectionError on bad input, and
    RequestInvalid when `policy` (the REST API's) refuses a field; `policy=None`: the operator.
    With `owner`, the run (and its floor run) is stored already claimed by that scheduler for
    `lease_s` seconds, so that no other process sharing the store starts it first.

    With `spec.floor` (the default), an agent other than `interpolation` and at least one numeric
    target, a second queued run is stored: the interpolation floor on exactly those numeric
    targets (evaluator issue: the floor runs in every numeric report). It is linked both ways:
    its spec has floor_for=<this run's id>, and this run has a "floor_run" event naming it
    (`Store.floor_run`)."""
    agent_cls = resolve_checked_agent(spec, policy)
    try:
        check_no_secrets(spec.agent_options)
        profile = profile_for(agent_cls, spec.agent_options)
        if policy is not None and profile is not None:
            profile.api_key()  # the operator's key is there (its value stays unread here)
    except ValueError as e:  # ProfileError included
        raise SelectionError(str(e)) from e
    targets = select_targets(spec, catalogs.get(spec.gen_seed))
    run = store.create_run(spec, [t.id for t in targets], owner=owner, lease_s=lease_s)
    numeric = [t.id for t in targets if t.family == "numeric"]
    is_floor_agent = spec.agent == FLOOR_AGENT or getattr(agent_cls, "name", None) == FLOOR_AGENT
    if spec.floor and numeric and not is_floor_agent:
        floor = store.create_run(
            floor_spec(spec, numeric, run.id), numeric, owner=owner, lease_s=lease_s
        )
        store.add_event(run.id, "floor_run", {"run_id": floor.id})
    return run


def floor_spec(spec: RunSpec, numeric_ids: list[str], run_id: str) -> RunSpec:
    """The interpolation floor's spec for `spec`: same dataset, find-gen seed, protocol and budgets.

    The agent's `max_inputs` stays at its default (129 grid points in one call): Budgets limit
    target *calls*, rounds, tokens and time, not inputs, so there is no input budget to map."""
    return spec.model_copy(
        update={
            "agent": FLOOR_AGENT,
            "agent_options": {},
            "family": None,
            "variant": None,
            "ids": list(numeric_ids),
            "limit": None,
            "seed": None,
            "floor": False,
            "floor_for": run_id,
        },
        deep=True,
    )


# ---- target clients -------------------------------------------------------------------------
def make_target_client(settings: Settings, catalogs: CatalogCache) -> TargetClient:
    """HARNESS_SANDBOX picks the backend: bwrap (default) or docker run each target in a sandboxed
    target service (the sandbox engineer's ServiceTargetClient over a ServicePool); inprocess
    evaluates targets in this process, unsandboxed (tests only)."""
    from harness import target_client as tc

    if settings.sandbox == "inprocess":
        return tc.InProcessTargetClient(catalogs.get(settings.gen_seed))
    from harness.sandbox.base import get_sandbox
    from harness.sandbox.pool import ServicePool
    from harness.sandbox.workdir import sweep_stale

    sweep_stale()  # what killed earlier processes left behind (never a live process's)

    pool = ServicePool(
        get_sandbox(settings.sandbox),
        backbone_url=settings.backbone_url,
        intervention_url=settings.intervention_url,
        max_services=settings.pool_max_services,
        idle_s=settings.pool_idle_s,
    )
    return _PooledClient(tc.ServiceTargetClient(catalogs.get(settings.gen_seed), pool), pool)


class _PooledClient:
    """A ServiceTargetClient that also stops its sandboxed services when closed."""

    def __init__(self, client: Any, pool: Any) -> None:
        self.client, self.pool = client, pool

    async def call(self, target_id: str, inputs: Any) -> Any:
        return await self.client.call(target_id, inputs)

    async def prewarm(self, target_ids: list[str]) -> None:
        await self.client.prewarm(target_ids)

    async def aclose(self) -> None:
        try:
            await self.client.aclose()
        finally:
            await asyncio.to_thread(self.pool.close)


def load_score_hook(name: str) -> ScoreHook | None:
    """ "default": the evaluator's score_episode when present; "none": no scoring; else a dotted
    path `pkg.mod:function`."""
    if name == "default":
        return default_score_hook()
    if name in ("none", ""):
        return None
    module, _, attr = name.partition(":")
    return getattr(importlib.import_module(module), attr)


# ---- the scheduler --------------------------------------------------------------------------
# A scheduler stops a run's episodes when this share of its lease has passed without a renewal:
# the rest is the margin for clock skew between processes and for the episodes to stop.
FENCE = 2 / 3


def new_owner_id() -> str:
    """A scheduler's id in the store: host, process and a random part (a pid can be reused)."""
    return f"{socket.gethostname()[:64]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _lease_free(run: Run, owner: str) -> bool:
    """Whether `owner` may try to claim `run` (a read; the claim itself decides atomically)."""
    if run.owner == owner or run.lease_expires_at is None:
        return True
    until = run.lease_expires_at
    if until.tzinfo is None:  # SQLite hands datetimes back naive (they are stored in UTC)
        until = until.replace(tzinfo=UTC)
    return until < utcnow()


@dataclass
class _RunState:
    run_id: str
    spec: RunSpec
    agent_cls: type
    provider: str
    targets: dict[str, Target]
    profile: ProviderProfile | None = None  # where the agent's endpoint and key come from
    pending: deque[Episode] = field(default_factory=deque)
    active: dict[str, asyncio.Task[Any]] = field(default_factory=dict)
    cancelled: bool = False
    lost: bool = False  # the lease is gone: its episodes stop here without recording anything


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
        self.store, self.client = store, client
        self.settings = settings or Settings()
        self.catalogs = catalogs or CatalogCache()
        self.score_hook = score_hook
        self.only_runs = only_runs  # CLI: work on these runs only
        self.max_concurrency = self.settings.max_concurrency
        self.provider_limits = self.settings.provider_limit_map
        self._runs: dict[str, _RunState] = {}
        self._order: list[str] = []  # round-robin order of run ids
        self._rr = 0
        self._provider_active: dict[str, int] = {}
        self._active = 0
        self._wake = asyncio.Event()
        self._main: asyncio.Task[None] | None = None
        self._keeper: asyncio.Task[None] | None = None
        self._stopping = False
        # ownership: this scheduler's id, and when each run's lease was last taken or renewed
        # (monotonic clock, read before the UPDATE: the lease ends no earlier than that + lease)
        self.owner = owner or new_owner_id()
        self.lease_s = self.settings.run_lease_s
        self._lease_ok: dict[str, float] = {}
        self._preparing: set[str] = set()
        self._dropped: list[_RunState] = []  # lost runs whose episode tasks are still ending
        self.on_episode_end: Callable[[str, str], None] | None = None
        self._agent_hosts: AgentHosts | None = None
        # None: episodes run in this event loop; else HARNESS_EXECUTOR's (docs/scale-out.md)
        self.executor = executor if executor is not None else make_executor(self.settings)

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
            self.store.release_runs(list(self._runs) + list(self._preparing), self.owner)
        except Exception:  # the leases then run out by themselves
            log.exception("releasing the run leases failed")
        if self._agent_hosts is not None:
            self._agent_hosts.close()
            self._agent_hosts = None
        if self.executor is not None:
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

    # ---- leases -----------------------------------------------------------------------------
    def _owns(self, run_id: str) -> bool:
        """This process may still write the run's episodes: its lease was renewed recently
        enough that no other process can have taken the run over (checked before each step)."""
        ok = self._lease_ok.get(run_id)
        return ok is not None and time.monotonic() - ok < self.lease_s * FENCE

    async def _keep_leases(self) -> None:
        while not self._stopping:
            await asyncio.sleep(self.lease_s / 3)
            try:
                self._renew()
            except Exception:  # the fence stops the episodes if this keeps failing
                log.exception("renewing run leases failed")

    def _renew(self) -> None:
        held = set(self._runs) | self._preparing
        if not held:
            return
        t = time.monotonic()
        kept = self.store.renew_leases(held, self.owner, self.lease_s)
        for run_id in held:
            if run_id in kept:
                self._lease_ok[run_id] = t
                continue
            self._lease_ok.pop(run_id, None)
            rs = self._runs.get(run_id)
            if rs is None:
                continue  # still preparing: _prepare sees the lease gone
            run = self.store.get_run(run_id)
            if run is not None and run.status == "cancelled":
                self._cancel_in_memory(run_id)
            elif not rs.cancelled:
                self._drop(rs)

    def _drop(self, rs: _RunState) -> None:
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

    def _forget(self, rs: _RunState) -> None:
        if self._runs.get(rs.run_id) is rs:
            del self._runs[rs.run_id]
            self._lease_ok.pop(rs.run_id, None)
            if rs.run_id in self._order:
                self._order.remove(rs.run_id)

    # ---- runs -------------------------------------------------------------------------------
    async def _refresh(self) -> None:
        active = {r.id: r for r in self.store.active_runs()}
        for run_id, rs in list(self._runs.items()):
            run = active.get(run_id) or self.store.get_run(run_id)
            if run is not None and run.status == "cancelled":  # cancelled by another process
                self._cancel_in_memory(run_id)
            elif run is None or run.status in RUN_TERMINAL or run.owner != self.owner:
                if not rs.cancelled:
                    self._drop(rs)
        self._dropped = [rs for rs in self._dropped if rs.active]
        # episodes of cancelled runs that nobody holds any more (their owner died meanwhile)
        self.store.sweep_cancelled()
        for run in active.values():
            if self.holds(run.id) or (self.only_runs and run.id not in self.only_runs):
                continue
            if not _lease_free(run, self.owner):
                continue  # another process executes it
            t = time.monotonic()
            if self.store.claim_run(run.id, self.owner, self.lease_s):
                self._lease_ok[run.id] = t
                self._preparing.add(run.id)
                try:
                    await self._prepare(run)
                finally:
                    self._preparing.discard(run.id)

    async def _prepare(self, run: Run) -> None:
        try:
            spec = RunSpec.model_validate(run.spec)
            agent_cls = resolve_agent_class(spec.agent)
            profile = profile_for(agent_cls, spec.agent_options)
            catalog = self.catalogs.get(spec.gen_seed)
            # loading a catalog can take seconds (find-gen): keep serving other runs meanwhile
            targets = await asyncio.to_thread(
                lambda: {tid: catalog.get(tid) for tid in run.target_ids}
            )
        except Exception as e:
            log.warning("run %s cannot start: %s", run.id, e)
            error = f"{type(e).__name__}: {e}"
            self.store.set_run_status(run.id, "failed", error=error, owner=self.owner)
            return
        with_ex = spec.protocol.method != "interactive"
        self.store.ensure_episodes(
            run.id,
            (
                {
                    "idx": i,
                    "target_id": tid,
                    "dataset": targets[tid].dataset,
                    "family": targets[tid].family,
                    "variant": targets[tid].variant,
                    "exemplar_init": with_ex and bool(targets[tid].exemplars),
                }
                for i, tid in enumerate(run.target_ids)
            ),
        )
        if run.status == "queued":
            self.store.set_run_status(run.id, "running", owner=self.owner)
        rs = _RunState(
            run.id,
            spec,
            agent_cls,
            getattr(agent_cls, "provider", "local") or "local",
            targets,
            profile=profile,
        )
        for ep in self.store.episodes(run.id):
            unscored = ep.status in ("completed", "budget_exhausted") and not ep.scored
            if ep.status not in EPISODE_TERMINAL or (unscored and self.score_hook is not None):
                rs.pending.append(ep)
        self._runs[run.id] = rs  # held (its lease renewed) while its targets warm up
        await self._prewarm(rs)
        if self._runs.get(run.id) is not rs:  # lost or cancelled while warming up
            return
        if run.id not in self._lease_ok:
            self._drop(rs)
            return
        self._note_isolation(run.id)
        self._order.append(run.id)
        self._maybe_finish(rs)

    async def _prewarm(self, rs: _RunState) -> None:
        """Start one target-service group for the run's pending targets before its episodes
        begin (otherwise each target cold-starts its own instance). A failure here is only
        logged: each episode's own call then reports it with its category."""
        prewarm = getattr(self.executor or self.client, "prewarm", None)
        ids = sorted({ep.target_id for ep in rs.pending})
        if prewarm is None or not ids:
            return
        try:
            await prewarm(ids)
        except Exception as e:
            log.warning("prewarming %d targets of run %s failed: %s", len(ids), rs.run_id, e)

    def _maybe_finish(self, rs: _RunState) -> None:
        if rs.pending or rs.active or rs.lost:
            return
        self._forget(rs)
        if rs.cancelled:
            self.store.release_runs([rs.run_id], self.owner)
            return
        counts = self.store.episode_counts(rs.run_id)
        total = sum(counts.values())
        status = "failed" if total and counts.get("error", 0) == total else "completed"
        error = "every episode ended in error" if status == "failed" else None
        self.store.set_run_status(rs.run_id, status, error=error, owner=self.owner)

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
                self._launch(rs, rs.pending.popleft())
                launched = True
                self._rr = (pos + 1) % n
                break  # one episode per turn; the next turn starts at the next run

    def _launch(self, rs: _RunState, ep: Episode) -> None:
        self._active += 1
        self._provider_active[rs.provider] = self._provider_active.get(rs.provider, 0) + 1
        task = asyncio.create_task(self._run_episode(rs, ep), name=f"episode-{ep.id}")
        rs.active[ep.id] = task

    def _hosts(self) -> AgentHosts:
        if self._agent_hosts is None:
            from harness.agent_host import AgentHosts

            self._agent_hosts = AgentHosts(
                memory_mb=self.settings.agent_memory_mb,
                max_message_chars=self.settings.agent_max_message_chars,
            )
        return self._agent_hosts

    async def _make_agent(self, rs: _RunState, ep: Episode) -> Agent:
        opts = rs.spec.agent_options
        return await make_agent(self.settings, self._hosts, rs.agent_cls, opts, rs.profile, ep)

    def _note_isolation(self, run_id: str) -> None:
        if self.settings.agent_isolation == "none":
            log.warning("run %s: agents run IN THIS PROCESS (agent isolation none)", run_id)
            self.store.add_event(run_id, "agent_isolation", {"mode": "none", "isolated": False})

    async def _run_episode(self, rs: _RunState, ep: Episode) -> None:
        status = "error"
        try:
            target = rs.targets[ep.target_id]
            if self.executor is not None:
                job = EpisodeJob(
                    run_id=rs.run_id,
                    episode_id=ep.id,
                    spec=rs.spec,
                    target=target,
                    settings=self.settings,
                    owner=self.owner,
                )
                status = await self.executor.run(job, self.score_hook)
            else:
                status = await execute_episode(
                    self.store,
                    ep,
                    target,
                    rs.spec,
                    lambda: self._make_agent(rs, ep),
                    self.client,
                    self.score_hook,
                    should_stop=lambda: rs.cancelled,
                    owns=lambda: not rs.lost and self._owns(rs.run_id),
                    step_timeout_s=self.settings.agent_step_timeout_s,
                )
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
        cur = self.store.get_episode(ep.id)
        if cur is not None and cur.status not in EPISODE_TERMINAL:
            self.store.finish_episode(ep.id, ep.run_id, **outcome)

    def cancel_run(self, run_id: str) -> bool:
        """Cancel a queued or running run (and its interpolation floor run, if it has one);
        False when it had already ended. Episodes nobody runs end as cancelled at once; those
        another process runs end there, when it sees the cancel in the store."""
        changed = self.store.cancel_run(run_id)
        if changed:
            self._cancel_in_memory(run_id)
            floor = self.store.floor_run(run_id)
            if floor is not None and self.store.cancel_run(floor.id):
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
        for ep in self.store.episodes(run_id, status=("queued", "running")):
            if ep.id not in rs.active:
                self.store.finish_episode(ep.id, run_id, status="cancelled", end_reason="cancelled")
        if not rs.active:
            self._maybe_finish(rs)

    # ---- helpers for in-process use (CLI, benchmarks) ---------------------------------------
    async def wait_run(self, run_id: str, poll_s: float = 0.1) -> Run:
        while True:
            run = self.store.get_run(run_id)
            if run is None:
                raise KeyError(run_id)
            if run.status in RUN_TERMINAL:
                return run
            await asyncio.sleep(poll_s)
