"""A model server's app run in this process (real uvicorn on a free loopback port), for tests that
must watch inside it: `Held` stops a tokenizer call until the test lets it go, so a test can ask
`/health` while a request is being tokenized. Both model servers' tests use it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import httpx

# How long a held call waits to be let go. Only reached when nothing can let it go: the call then
# blocks the event loop, so `/health` cannot be answered (the bug the tests look for).
HOLD_S = 10


class Held:
    """`fn`, each call of which waits until `release` is set (at most HOLD_S); `released` says
    whether every call was let go in time (False: one timed out)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.entered = threading.Event()
        self.release = threading.Event()
        self.waits: list[bool] = []

    @property
    def released(self) -> bool:
        return bool(self.waits) and all(self.waits)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.entered.set()
        self.waits.append(self.release.wait(HOLD_S))
        return self.fn(*args, **kwargs)


def health_while_held(url: str, route: str, body: Any, held: Held) -> int:
    """POST `body` to `route`; once the server is inside `held`, ask `/health` and let `held` go
    when it answers. Returns the POST's status; `held.released` then says whether `/health` was
    answered while the request was being tokenized."""
    status: list[int] = []
    post = threading.Thread(
        target=lambda: status.append(httpx.post(url + route, json=body, timeout=120).status_code)
    )
    post.start()
    try:
        assert held.entered.wait(60), "the request never reached the tokenizer"
        r = httpx.get(url + "/health", timeout=120)
        assert r.status_code == 200, r.text
        held.release.set()
    finally:
        held.release.set()
        post.join()
    return status[0]
