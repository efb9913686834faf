"""The one place that wires a driver process: settings (and their plugins), the store, the
catalogs, the target client (sandboxed target services in a pool), the executor and the
scheduler. The API server's lifespan and `harness run` call `build_services`; a Ray worker
builds its part (store, node target pool) from the same builders (`interp_harness.harness.store.repo.open_store`,
`interp_harness.harness.target_client.make_target_client`) and runs episodes with the same `LocalExecutor`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.episode.context import ScoreHook
from interp_harness.harness.episode.runner import default_score_hook
from interp_harness.harness.executors import NoLocalTargets, make_executor
from interp_harness.harness.executors.base import Executor
from interp_harness.harness.runs.scheduler import Scheduler
from interp_harness.harness.settings import Settings, load_plugins
from interp_harness.harness.store.repo import Store, open_store
from interp_harness.harness.target_client import TargetClient, make_target_client


def load_score_hook(name: str) -> ScoreHook | None:
    """ "default": the evaluator's score_episode when present; "none": no scoring; else a dotted
    path `pkg.mod:function`."""
    if name == "default":
        return default_score_hook()
    if name in ("none", ""):
        return None
    module, _, attr = name.partition(":")
    return getattr(importlib.import_module(module), attr)


@dataclass
class Services:
    settings: Settings
    store: Store
    catalogs: CatalogCache
    client: TargetClient
    scheduler: Scheduler

    async def aclose(self, *, dispose: bool = True) -> None:
        """Stop the scheduler (its executor too), then the target services; `dispose`: close
        the store's connections."""
        try:
            await self.scheduler.stop()
        finally:
            await self.client.aclose()
            if dispose:
                self.store.engine.dispose()


def build_services(
    settings: Settings,
    *,
    executor: Executor | None = None,
    owner: str | None = None,
    only_runs: set[str] | None = None,
) -> Services:
    """Everything a process that executes runs needs, not started (`services.scheduler.start()`).
    `executor`: one already made (and connected) from `settings`; by default HARNESS_EXECUTOR's.
    With a remote executor this process starts no target services (the workers' nodes do)."""
    load_plugins(settings)
    if executor is None:
        executor = make_executor(settings)  # still None for "local": episodes run in this loop
    store = open_store(settings.url)
    catalogs = CatalogCache()
    # only episodes run here need target services here; a remote executor's workers start their own
    client: TargetClient = (
        make_target_client(settings, catalogs) if executor is None else NoLocalTargets()
    )
    scheduler = Scheduler(
        store,
        client,
        settings=settings,
        catalogs=catalogs,
        score_hook=load_score_hook(settings.score_hook),
        only_runs=only_runs,
        executor=executor,
        owner=owner,
    )
    return Services(settings, store, catalogs, client, scheduler)
