"""How the orchestrator calls targets: by id, with inputs, getting outputs only (never ground truth)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.models import CallOutput
from interp_harness.function_store.runtime import RuntimeContext, build_runner
from interp_harness.function_store.service.client import TargetServiceClient, TargetServiceError

if TYPE_CHECKING:
    from interp_harness.harness.domain.catalogs import CatalogCache
    from interp_harness.harness.sandbox.pool import ServicePool
    from interp_harness.harness.settings import Settings

log = logging.getLogger(__name__)


class TargetClient(Protocol):
    async def call(self, target_id: str, inputs: Sequence[str]) -> list[CallOutput]: ...

    async def aclose(self) -> None: ...


class InProcessTargetClient:
    """Evaluates targets in this process: unit tests and benchmarks only, never for real agents."""

    def __init__(self, catalog: Catalog, ctx: RuntimeContext | None = None) -> None:
        log.warning(
            "InProcessTargetClient: targets run UNSANDBOXED in the orchestrator (tests only)"
        )
        self.catalog = catalog
        self.ctx = ctx or RuntimeContext()
        self._runners: dict[str, object] = {}

    async def call(self, target_id: str, inputs: Sequence[str]) -> list[CallOutput]:
        runner = self._runners.get(target_id)
        if runner is None:
            runner = self._runners[target_id] = build_runner(self.catalog.get(target_id), self.ctx)
        return await asyncio.to_thread(runner.call, list(inputs))

    async def aclose(self) -> None:
        self._runners.clear()


class ServiceTargetClient:
    """Calls targets through sandboxed target-service instances (the real thing).

    Targets come from the catalog; `pool` (a `interp_harness.harness.sandbox.pool.ServicePool`) holds the warm
    instances. A target the pool does not serve yet gets an instance on demand (a cold start).
    An instance that stops answering is restarted once and the call retried; after that the
    error reaches the caller as a `TargetServiceError` with its category."""

    def __init__(self, catalog: Catalog, pool: ServicePool) -> None:
        self.catalog = catalog
        self.pool = pool
        self._clients: dict[str, TargetServiceClient] = {}
        self._start_lock = asyncio.Lock()

    async def prewarm(self, target_ids: Sequence[str]) -> None:
        targets = [self.catalog.get(i) for i in target_ids]
        await asyncio.to_thread(self.pool.serve, targets)

    async def _lease(self, target_id: str) -> str:
        url = self.pool.lease(target_id)
        while url is None:
            async with self._start_lock:
                if not self.pool.serves(target_id):
                    log.info("cold start of a target service for %s", target_id)
                    target = self.catalog.get(target_id)
                    await asyncio.to_thread(self.pool.serve, [target])
            url = self.pool.lease(target_id)  # None again only if evicted in between
        return url

    async def _client(self, url: str) -> TargetServiceClient:
        if url not in self._clients:
            live = self.pool.live_urls()  # drop clients of instances the pool has stopped
            for old in [u for u in self._clients if u not in live]:
                await self._clients.pop(old).aclose()
            self._clients[url] = TargetServiceClient(url)
        return self._clients[url]

    async def call(self, target_id: str, inputs: Sequence[str]) -> list[CallOutput]:
        url = await self._lease(target_id)
        try:
            try:
                return await (await self._client(url)).call(target_id, inputs)
            except TargetServiceError as e:
                if e.category != "infrastructure":
                    raise
                log.warning("target service at %s failed (%s): restarting it once", url, e.detail)
                old = self._clients.pop(url, None)
                if old:
                    await old.aclose()
                try:
                    new_url = await asyncio.to_thread(self.pool.restart, url)
                except KeyError:
                    # Another call already replaced this instance (a run's calls share one). Our
                    # lease is on the group, which is never evicted while leased: use its url now.
                    new_url = self.pool.url_for(target_id) or url
                url = new_url  # the lease belongs to the group: it follows the new url
                return await (await self._client(url)).call(target_id, inputs)
        finally:
            self.pool.release(url)

    async def aclose(self) -> None:
        for c in self._clients.values():
            await c.aclose()
        self._clients.clear()


def make_target_client(settings: Settings, catalogs: CatalogCache) -> TargetClient:
    """HARNESS_SANDBOX picks the backend: bwrap (default) or docker run each target in a sandboxed
    target service (a ServiceTargetClient over a ServicePool); inprocess evaluates targets in
    this process, unsandboxed (tests only)."""
    if settings.sandbox == "inprocess":
        return InProcessTargetClient(catalogs.get(settings.gen_seed))
    pool = service_pool(settings)
    return _PooledClient(ServiceTargetClient(catalogs.get(settings.gen_seed), pool), pool)


def service_pool(settings: Settings) -> ServicePool:
    """A pool of sandboxed target services on the operator's backend, after sweeping what killed
    processes left behind (never a live process's)."""
    from interp_harness.harness.sandbox.base import get_sandbox
    from interp_harness.harness.sandbox.pool import ServicePool
    from interp_harness.harness.sandbox.workdir import sweep_stale

    sweep_stale()
    options: dict[str, object] = {}
    if settings.sandbox == "docker":
        from interp_harness.harness.sandbox.docker_engine import target_sandbox_options

        options = target_sandbox_options(settings.target_image, settings.target_image_wheel_paths)
    return ServicePool(
        get_sandbox(settings.sandbox, **options),
        backbone_url=settings.backbone_url,
        intervention_url=settings.intervention_url,
        max_services=settings.pool_max_services,
        idle_s=settings.pool_idle_s,
    )


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
