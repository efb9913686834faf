"""Failed token attempts per client address and credential kind: past a budget, attempts are
refused unanswered.

One `FailureBudget` per server process counts what presents a secret that turns out wrong: a
bearer token of the REST API that is not configured, a token typed into the web login form, an
MCP token that is no episode's. A request without any token is no guess and is never counted.
Once an address has failed `max_failures` times within the last `window_s` seconds in one budget,
each further attempt from it in that budget that presents a token is answered 429 before the token
is compared, the right one included (else the 429 itself would tell a right guess from a wrong
one), until its oldest counted failure is older than the window. Successes are never counted.

Each (budget, address) pair counts on its own. The budgets are the kinds of credential
(`API`: the REST API's bearer tokens; `LOGIN`: the web login form) and, for MCP, one per live
episode (`mcp_budget`: the episode is in the request's path) plus one for paths of no live
episode. So an external agent sending wrong MCP tokens from the operator's address (both are
often 127.0.0.1) locks out neither the operator's API token, nor the web login, nor another
episode's MCP client; guessing is still bounded, by `max_failures` per window times the live
episodes plus one. Someone else's guessing does not lock the operator out unless it comes from the
operator's own address and presents the same kind of credential (behind a proxy every client has
the proxy's address, unless the operator trusts it: HARNESS_TRUSTED_PROXIES).
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


API = "api"  # the REST API's bearer tokens
LOGIN = "login"  # tokens typed into the web login form


def mcp_budget(episode_id: str | None) -> str:
    """The MCP budget of a request whose path names `episode_id` (None: no live episode)."""
    return f"mcp:{episode_id}" if episode_id else "mcp"


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
    """Failed attempts per (budget, client address) within a sliding window (thread-safe)."""

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
        self._failed: OrderedDict[tuple[str, str], deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def check(self, client: str, budget: str) -> None:
        """Raise TooManyFailures when `client` may not try a token of `budget` now."""
        with self._lock:
            times = self._failed.get((budget, client))
            if times is None or len(times) < self.max_failures:
                return
            wait = times[0] + self.window_s - self._clock()
        if wait > 0:
            raise TooManyFailures(wait)

    def failed(self, client: str, budget: str) -> None:
        """Count one failed attempt of `client` in `budget`."""
        now = self._clock()
        key = (budget, client)
        with self._lock:
            times = self._failed.pop(key, None)
            if times is None:
                times = deque(maxlen=self.max_failures)  # only the last ones decide
            times.append(now)
            self._failed[key] = times  # most recently failing last
            while len(self._failed) > self._max_clients:
                self._failed.popitem(last=False)


def client_address(scope_client: tuple[str, int] | list | None) -> str:
    """The address a request came from (an ASGI scope's `client`, or Starlette's
    `request.client`); uvicorn sets it from X-Forwarded-For only for trusted proxies."""
    if not scope_client:
        return "unknown"
    return str(scope_client[0])
