"""Which process executes a run: owner ids and the leases a scheduler holds on its runs.

A run is executed by the one process holding its lease (`store.runs.claim`: owner id and expiry,
taken by one conditional UPDATE, renewed every third of HARNESS_RUN_LEASE_S). A process that
cannot renew stops its episodes of that run (without recording anything) before its lease can
run out (`FENCE`), so that a process taking the run over after expiry never runs an episode at
the same time as the old owner; it then resumes them from their last stored step.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Iterable
from datetime import UTC

from interp_harness.harness.store.models import Run, utcnow
from interp_harness.harness.store.repo import Store

# A scheduler stops a run's episodes when this share of its lease has passed without a renewal:
# the rest is the margin for clock skew between processes and for the episodes to stop.
FENCE = 2 / 3


def new_owner_id() -> str:
    """A scheduler's id in the store: host, process and a random part (a pid can be reused)."""
    return f"{socket.gethostname()[:64]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def lease_free(run: Run, owner: str) -> bool:
    """Whether `owner` may try to claim `run` (a read; the claim itself decides atomically)."""
    if run.owner == owner or run.lease_expires_at is None:
        return True
    until = run.lease_expires_at
    if until.tzinfo is None:  # SQLite hands datetimes back naive (they are stored in UTC)
        until = until.replace(tzinfo=UTC)
    return until < utcnow()


class Leases:
    """The leases one scheduler holds: when each was last taken or renewed (monotonic clock,
    read before the UPDATE: the lease ends no earlier than that + lease_s)."""

    def __init__(self, store: Store, owner: str, lease_s: float) -> None:
        self.store, self.owner, self.lease_s = store, owner, lease_s
        self._ok: dict[str, float] = {}

    def claim(self, run_id: str) -> bool:
        t = time.monotonic()
        if self.store.runs.claim(run_id, self.owner, self.lease_s):
            self._ok[run_id] = t
            return True
        return False

    def held(self, run_id: str) -> bool:
        """Taken or renewed, and not lost since (a renewal that failed forgets it)."""
        return run_id in self._ok

    def owns(self, run_id: str) -> bool:
        """This process may still write the run's episodes: its lease was renewed recently
        enough that no other process can have taken the run over (checked before each step)."""
        ok = self._ok.get(run_id)
        return ok is not None and time.monotonic() - ok < self.lease_s * FENCE

    def forget(self, run_id: str) -> None:
        self._ok.pop(run_id, None)

    def renew(self, run_ids: Iterable[str]) -> set[str]:
        """Renew the leases of `run_ids`; returns those that could not be renewed (forgotten)."""
        held = set(run_ids)
        if not held:
            return set()
        t = time.monotonic()
        kept = self.store.runs.renew_leases(held, self.owner, self.lease_s)
        for run_id in kept:
            self._ok[run_id] = t
        lost = held - set(kept)
        for run_id in lost:
            self._ok.pop(run_id, None)
        return lost

    def release(self, run_ids: list[str]) -> None:
        self.store.runs.release(run_ids, self.owner)
