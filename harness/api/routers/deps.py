"""What the routes share: the process's services, the API's own state, bearer tokens, lookups."""

from __future__ import annotations

import hmac
import threading
from dataclasses import dataclass
from typing import Any

from fastapi import Depends, Header, HTTPException, Request

from harness.api import schemas as S
from harness.api.limits import StreamSlots
from harness.policy import ApiPolicy
from harness.services import Services
from harness.settings import Settings
from harness.store.models import Run


def error_reply(status: int, description: str | None = None) -> dict[int, dict[str, Any]]:
    """A route's `responses` entry for an error reply with an ErrorOut body."""
    entry: dict[str, Any] = {"model": S.ErrorOut}
    if description is not None:
        entry["description"] = description
    return {status: entry}


ERRORS = {
    **error_reply(400, "bad input (says what is wrong)"),
    **error_reply(401, "missing or wrong bearer token"),
}
NOT_FOUND = error_reply(404, "no such id")
MAX_OFFSET = 1_000_000_000  # beyond any store's size, far inside SQLite's 64-bit integers
MAX_EVENT_ID = 2**62


@dataclass
class ApiState:
    """The API's own state, made with the app (the services come with its lifespan)."""

    settings: Settings
    policy: ApiPolicy
    streams: StreamSlots
    # Building a find-gen catalog for a seed not loaded yet costs seconds of CPU: one at a time,
    # and (with tokens configured) only for callers with a token (issue 27).
    seed_builds: threading.BoundedSemaphore

    @classmethod
    def from_settings(cls, settings: Settings) -> ApiState:
        return cls(
            settings,
            ApiPolicy.from_settings(settings),
            StreamSlots(settings.sse_max_streams, settings.sse_max_per_client),
            threading.BoundedSemaphore(1),
        )


def services(request: Request) -> Services:
    return request.app.state.services


def api_state(request: Request) -> ApiState:
    return request.app.state.api


def authorised(request: Request, authorization: str | None = Header(None)) -> bool:
    """True when no tokens are configured or the request carries one of them."""
    tokens = api_state(request).settings.tokens
    if not tokens:
        return True
    scheme, _, token = (authorization or "").partition(" ")
    return scheme.lower() == "bearer" and any(
        hmac.compare_digest(token.encode(), t.encode()) for t in tokens
    )


def require_token(ok: bool = Depends(authorised)) -> None:
    if not ok:
        raise HTTPException(
            401,
            "missing or invalid bearer token (send 'Authorization: Bearer <token>')",
            headers={"WWW-Authenticate": "Bearer"},
        )


def get_run_or_404(svc: Services, run_id: str) -> Run:
    run = svc.store.get_run(run_id)
    if run is None:
        raise HTTPException(404, f"no run with id {run_id!r}")
    return run
