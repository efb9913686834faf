"""One asyncio task draining a queue of requests, each answered through its future: the shared
lifecycle of the model servers' batchers (`backbone.server`, `intervention.server`), which differ
only in how they group what is queued (`_run`)."""

from __future__ import annotations

import asyncio
import contextlib
from abc import ABC, abstractmethod
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class QueueWorker(ABC, Generic[T]):
    def __init__(self) -> None:
        self._queue: asyncio.Queue[tuple[T, asyncio.Future]] = asyncio.Queue()
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _enqueue(self, item: T) -> Any:
        fut = asyncio.get_running_loop().create_future()
        await self._queue.put((item, fut))
        return await fut

    @abstractmethod
    async def _run(self) -> None:
        """Take (item, future) pairs from `self._queue` forever and settle the futures."""
