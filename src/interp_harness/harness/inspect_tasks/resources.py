"""What an `inspect eval` process holds for our tasks: the targets its samples stand for (ground
truth included: this process plays the orchestrator) and the sandboxed target services that
answer their calls. One instance per process (`resources()`): the task factories register the
targets they select, the solvers and the scorer call them by sample id, and the services start on
the first call and stop with the process (or `aclose`)."""

from __future__ import annotations

import asyncio
import atexit
import threading
from collections.abc import Iterable, Sequence

from interp_harness.function_store.models import CallOutput, Target
from interp_harness.harness.settings import Settings
from interp_harness.harness.target_client import (
    ServiceTargetClient,
    TargetClient,
    service_pool,
)


class UnknownTarget(KeyError):
    """A sample id no task of this process registered."""


class _Targets:
    """The registered targets, looked up as a catalog is (`get`) by the target client."""

    def __init__(self) -> None:
        self.by_id: dict[str, Target] = {}

    def get(self, target_id: str) -> Target:
        try:
            return self.by_id[target_id]
        except KeyError:
            raise UnknownTarget(target_id) from None


class EvalResources:
    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self._targets = _Targets()
        self._client: TargetClient | None = None
        self._pool: object | None = None
        self._lock = threading.Lock()

    def add_targets(self, targets: Iterable[Target]) -> None:
        """Register a task's targets. The same id twice must be the same target (two tasks of
        one eval-set may select it); a different one under that id is refused."""
        for t in targets:
            old = self._targets.by_id.get(t.id)
            if old is not None and old != t:
                raise ValueError(f"two different targets share the id {t.id!r} in this process")
            self._targets.by_id[t.id] = t

    def target(self, target_id: str) -> Target:
        return self._targets.get(target_id)

    def client(self) -> TargetClient:
        """The target client, started on first use (sandboxed services in a pool)."""
        with self._lock:
            if self._client is None:
                pool = service_pool(self.settings)
                self._pool = pool
                self._client = ServiceTargetClient(self._targets, pool)  # type: ignore[arg-type]
                atexit.register(pool.close)
            return self._client

    async def call(self, target_id: str, inputs: Sequence[str]) -> list[CallOutput]:
        self.target(target_id)  # unknown ids fail here, not in a sandbox
        return await self.client().call(target_id, inputs)

    async def aclose(self) -> None:
        """Stop the target services (a later call starts them again)."""
        with self._lock:
            client, pool = self._client, self._pool
            self._client = self._pool = None
        if client is not None:
            await client.aclose()
        if pool is not None:
            await asyncio.to_thread(pool.close)  # type: ignore[attr-defined]


_RESOURCES: EvalResources | None = None


def resources() -> EvalResources:
    """This process's one instance."""
    global _RESOURCES
    if _RESOURCES is None:
        _RESOURCES = EvalResources()
    return _RESOURCES
