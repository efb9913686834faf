"""The web UI's login sessions, held in the server process's memory.

A login opens a session under a new random id (the cookie's value: nothing derived from the
token); the table maps it to the token it was opened with. A session ends at logout, after
`idle_s` seconds without a request, when the table is full and it is the least recently used, or
when the process ends. `harness serve` is one process, so one table sees every request; servers
sharing a store do not share sessions (a browser logs in to each).
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

MAX_SESSIONS = 10_000  # only token holders open sessions; bounded all the same


@dataclass
class _Session:
    token: str
    last_seen: float


def _key(session_id: str) -> str:
    # looked up by a hash: no table holds a cookie value a timing probe could walk
    return hashlib.sha256(session_id.encode()).hexdigest()


class SessionTable:
    """Open sessions by id, each with its token and when it was last used (thread-safe)."""

    def __init__(
        self,
        idle_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_sessions: int = MAX_SESSIONS,
    ) -> None:
        self.idle_s, self._clock, self._max = idle_s, clock, max_sessions
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._lock = threading.Lock()

    def open(self, token: str) -> str:
        """A new session for `token`; its id (the cookie's value)."""
        session_id = secrets.token_urlsafe(32)
        now = self._clock()
        with self._lock:
            # least recently used first: drop the idle ones, then any beyond the bound
            while self._sessions and (
                len(self._sessions) >= self._max
                or now - next(iter(self._sessions.values())).last_seen > self.idle_s
            ):
                self._sessions.popitem(last=False)
            self._sessions[_key(session_id)] = _Session(token, now)
        return session_id

    def token(self, session_id: str) -> str | None:
        """The token of the open session `session_id` (which counts as a use), else None."""
        if not session_id:
            return None
        key, now = _key(session_id), self._clock()
        with self._lock:
            s = self._sessions.get(key)
            if s is None:
                return None
            if now - s.last_seen > self.idle_s:
                del self._sessions[key]
                return None
            s.last_seen = now
            self._sessions.move_to_end(key)
            return s.token

    def close(self, session_id: str) -> None:
        with self._lock:
            self._sessions.pop(_key(session_id), None)

    def __len__(self) -> int:
        return len(self._sessions)
