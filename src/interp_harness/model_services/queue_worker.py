"""One asyncio task draining a queue of requests, each answered through its future: the shared
lifecycle of the model servers' batchers (`backbone.server`, `intervention.server`), which differ
only in how they group what is queued (`_run`).

The queue is bounded (`max_queued`, in the units each server counts: prompts, texts): a request
that would take it past the bound is refused at once with `QueueFull` (the servers answer 503
with Retry-After) instead of waiting behind hours of work; a request larger than the bound itself
can never be admitted and is refused with `NeverFits` (a 400: retrying cannot help). A request whose caller cancels its
future (the client went away) is skipped by `_run` if not started; see `live`.
"""

from __future__ import annotations

import asyncio
import contextlib
from abc import ABC, abstractmethod
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class QueueFull(RuntimeError):
    """The server already holds as much work as its operator allows; retry later."""

    def __init__(self, message: str, retry_after_s: int = 5) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class NeverFits(ValueError):
    """The request alone is more work than the server ever holds at once; split it."""


class QueueWorker(ABC, Generic[T]):
    def __init__(self, max_queued: int | None = None) -> None:
        self._queue: asyncio.Queue[tuple[T, asyncio.Future]] = asyncio.Queue()
        self._task: asyncio.Task | None = None
        self.max_queued = max_queued
        self.queued = 0  # units waiting or running, of requests still waited for

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def admit(self, size: int, what: str) -> None:
        """Raise NeverFits if `size` units exceed the bound itself, QueueFull unless `size` more
        units fit under it now."""
        if self.max_queued is not None and size > self.max_queued:
            raise NeverFits(
                f"the request holds {size} {what}, more than this server ever holds at once "
                f"({self.max_queued} {what} queued or running, the operator's limit): split it "
                "into smaller requests"
            )
        if self.max_queued is not None and self.queued + size > self.max_queued:
            raise QueueFull(
                f"the server is busy: {self.queued} {what} queued or running, the limit is "
                f"{self.max_queued}; retry later"
            )

    async def _enqueue(self, item: T, size: int = 1, what: str = "items") -> Any:
        self.admit(size, what)
        fut = asyncio.get_running_loop().create_future()
        self.queued += size
        try:
            await self._queue.put((item, fut))
            return await fut  # cancelled here when the client goes away: fut is cancelled too
        finally:
            self.queued -= size

    @staticmethod
    def live(entries: list[tuple[T, asyncio.Future]]) -> list[tuple[T, asyncio.Future]]:
        """The entries someone still waits for (a cancelled future's work is dropped)."""
        return [e for e in entries if not e[1].done()]

    @abstractmethod
    async def _run(self) -> None:
        """Take (item, future) pairs from `self._queue` forever and settle the futures."""
