"""What the routes share: the process's services, the API's own state, bearer tokens, lookups."""

from __future__ import annotations

import hmac
import threading
from dataclasses import dataclass
from typing import Any

from fastapi import Depends, Header, HTTPException, Request

from interp_harness.harness.api import schemas as S
from interp_harness.harness.api.limits import StreamSlots
from interp_harness.harness.domain.rendezvous import token_key
from interp_harness.harness.policy import ApiPolicy
from interp_harness.harness.rate_limit import API, FailureBudget, TooManyFailures, client_address
from interp_harness.harness.services import Services
from interp_harness.harness.settings import Settings
from interp_harness.harness.store.models import Run


def error_reply(status: int, description: str | None = None) -> dict[int, dict[str, Any]]:
    """A route's `responses` entry for an error reply with an ErrorOut body."""
    entry: dict[str, Any] = {"model": S.ErrorOut}
    if description is not None:
        entry["description"] = description
    return {status: entry}


ERRORS = {
    **error_reply(400, "bad input (says what is wrong)"),
    **error_reply(401, "missing or wrong bearer token"),
    **error_reply(429, "too many wrong tokens from this address (Retry-After says how long)"),
}
FORBIDDEN = error_reply(403, "the run belongs to another API token")
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
    # failed token attempts per client address: bearer tokens, web logins, MCP tokens
    failures: FailureBudget
    # panel assets being built for callers without a token (issue 49 item 10): each is CPU work
    # that anonymous loops could otherwise multiply at everyone's expense
    anon_assets: StreamSlots

    @classmethod
    def from_settings(cls, settings: Settings) -> ApiState:
        return cls(
            settings,
            ApiPolicy.from_settings(settings),
            StreamSlots(settings.sse_max_streams, settings.sse_max_per_client),
            threading.BoundedSemaphore(1),
            FailureBudget(settings.auth_max_failures, settings.auth_failure_window_s),
            StreamSlots(
                settings.web_anon_asset_slots,
                settings.web_anon_asset_per_client,
                "plots being drawn for callers without a token",
            ),
        )


def services(request: Request) -> Services:
    return request.app.state.services


def api_state(request: Request) -> ApiState:
    return request.app.state.api


def _known(token: str, tokens: list[str]) -> bool:
    return any(hmac.compare_digest(token.encode(), t.encode()) for t in tokens)


def caller_token(request: Request, authorization: str | None = Header(None)) -> str | None:
    """The configured token the request carries, else None. A wrong one counts against the
    client address's failure budget, and past it the request is answered 429 before its token
    is compared (interp_harness.harness.rate_limit); a request without a token is no guess."""
    tokens = api_state(request).settings.tokens
    scheme, _, token = (authorization or "").partition(" ")
    token = token.strip()
    if not tokens or scheme.lower() != "bearer" or not token:
        return None
    budget, client = api_state(request).failures, client_address(request.client)
    try:
        budget.check(client, API)
    except TooManyFailures as e:
        raise HTTPException(429, e.message, headers={"Retry-After": str(e.retry_after)}) from e
    if _known(token, tokens):
        return token
    budget.failed(client, API)
    return None


def authorised(request: Request, token: str | None = Depends(caller_token)) -> bool:
    """True when no tokens are configured or the request carries one of them."""
    return token is not None or not api_state(request).settings.tokens


def require_token(ok: bool = Depends(authorised)) -> None:
    if not ok:
        raise HTTPException(
            401,
            "missing or invalid bearer token (send 'Authorization: Bearer <token>')",
            headers={"WWW-Authenticate": "Bearer"},
        )


def may_change_run(settings: Settings, run: Run, token: str | None) -> None:
    """Raise 403 unless the caller may cancel or change `run`: with tokens configured, only the
    token that started it (runs.created_by) or an admin token (HARNESS_ADMIN_TOKENS) may. Call
    after `require_token`. Runs nobody started over the API (the CLI's, imported ones, those
    from before tokens were configured) belong to the operator: admin tokens only."""
    if not settings.tokens or token is None:
        return  # no tokens configured: local use, everyone may
    if _known(token, settings.admin_token_list):
        return
    if run.created_by is not None and hmac.compare_digest(run.created_by, token_key(token)):
        return
    raise HTTPException(
        403,
        f"run {run.id} was not started with this API token: only the token that started it "
        "or an admin token (HARNESS_ADMIN_TOKENS) may change it",
    )


def get_run_or_404(svc: Services, run_id: str) -> Run:
    run = svc.store.runs.get(run_id)
    if run is None:
        raise HTTPException(404, f"no run with id {run_id!r}")
    return run
