"""How the orchestrator calls targets: by id, with inputs, getting outputs only (never ground truth)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Protocol

from function_store.catalog import Catalog
from function_store.models import CallOutput
from function_store.runtime import RuntimeContext, build_runner

log = logging.getLogger(__name__)


class TargetClient(Protocol):
    async def call(self, target_id: str, inputs: Sequence[str]) -> list[CallOutput]: ...

    async def aclose(self) -> None: ...


class InProcessTargetClient:
    """Evaluates targets in this process: unit tests and benchmarks only, never for real agents."""

    def __init__(self, catalog: Catalog, ctx: RuntimeContext | None = None) -> None:
        log.warning("InProcessTargetClient: targets run UNSANDBOXED in the orchestrator (tests only)")
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
