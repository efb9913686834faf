"""Failed token attempts per client address: past a budget, attempts are refused unanswered.

One `FailureBudget` per server process counts what presents a secret that turns out wrong: a
bearer token of the REST API that is not configured, a token typed into the web login form, an
MCP token that is no episode's. A request without any token is no guess and is never counted.
Once an address has failed `max_failures` times within the last `window_s` seconds, each further
attempt from it that presents a token is answered 429 before the token is compared, the right one
included (else the 429 itself would tell a right guess from a wrong one), until its oldest counted
failure is older than the window. Successes are never counted, and each address has its own
budget: someone else's guessing does not lock the operator out unless it comes from the
operator's own address (behind a proxy every client has the proxy's address, unless the operator
trusts it: HARNESS_TRUSTED_PROXIES).
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

# the most addresses remembered at once (the least recently failing ones are forgotten first):
# bounded memory however many addresses guess
MAX_CLIENTS = 65_536


class TooManyFailures(Exception):
    """This address has used its failure budget; it may try again in `retry_after_s` seconds."""

    def __init__(self, retry_after_s: float) -> None:
        self.retry_after_s = retry_after_s
        super().__init__(self.message)

    @property
    def retry_after(self) -> int:
        """Whole seconds, for a Retry-After header."""
        return max(1, math.ceil(self.retry_after_s))

    @property
    def message(self) -> str:
        return (
            f"too many failed token attempts from this address: try again in {self.retry_after} s"
        )


class FailureBudget:
    """Failed attempts per client address within a sliding window (thread-safe)."""

    def __init__(
        self,
        max_failures: int = 20,
        window_s: float = 60.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_clients: int = MAX_CLIENTS,
    ) -> None:
        self.max_failures, self.window_s = max_failures, window_s
        self._clock, self._max_clients = clock, max_clients
        self._failed: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def check(self, client: str) -> None:
        """Raise TooManyFailures when `client` may not try a token now."""
        with self._lock:
            times = self._failed.get(client)
            if times is None or len(times) < self.max_failures:
                return
            wait = times[0] + self.window_s - self._clock()
        if wait > 0:
            raise TooManyFailures(wait)

    def failed(self, client: str) -> None:
        """Count one failed attempt of `client`."""
        now = self._clock()
        with self._lock:
            times = self._failed.pop(client, None)
            if times is None:
                times = deque(maxlen=self.max_failures)  # only the last ones decide
            times.append(now)
            self._failed[client] = times  # most recently failing last
            while len(self._failed) > self._max_clients:
                self._failed.popitem(last=False)


def client_address(scope_client: tuple[str, int] | list | None) -> str:
    """The address a request came from (an ASGI scope's `client`, or Starlette's
    `request.client`); uvicorn sets it from X-Forwarded-For only for trusted proxies."""
    if not scope_client:
        return "unknown"
    return str(scope_client[0])
