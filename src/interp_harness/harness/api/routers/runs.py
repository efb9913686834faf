"""Runs: create (POST /runs), list, read, their episodes, cancel, report."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError

from interp_harness.harness.api import schemas as S
from interp_harness.harness.api.routers import deps
from interp_harness.harness.api.routers.deps import (
    ERRORS,
    FORBIDDEN,
    MAX_OFFSET,
    NOT_FOUND,
    ApiState,
    api_state,
    caller_token,
    get_run_or_404,
    may_change_run,
    require_token,
    services,
)
from interp_harness.harness.domain.rendezvous import token_key
from interp_harness.harness.domain.spec import EpochReducer, RunSpec
from interp_harness.harness.policy import RequestInvalid
from interp_harness.harness.runs.admission import admit
from interp_harness.harness.runs.plan import store_plan
from interp_harness.harness.runs.preflight import PreflightError
from interp_harness.harness.runs.selection import SelectionError
from interp_harness.harness.services import Services

router = APIRouter()


@router.post(
    "/runs",
    response_model=S.RunOut,
    status_code=201,
    responses=ERRORS,
    dependencies=[Depends(require_token)],
)
async def post_run(
    spec: RunSpec,
    request: Request,
    svc: Services = Depends(services),
    api: ApiState = Depends(api_state),
    token: str | None = Depends(caller_token),
) -> S.RunOut:
    """Store a run (queued) and return at once; the scheduler starts it.

    Agents: the built-in, registered and installed ones (GET /agents); `agent_options` must
    fit the agent's declared options; endpoints and keys come from the operator's provider
    profiles, picked by `agent_options.profile` (docs/security.md). A run that cannot work
    (no key, endpoint down, unknown model, empty selection, backbone or judge down) is
    refused with 400 and not stored (`admit`, harness/runs/admission.py).

    An agent that meets its client over MCP (`external`): the reply lists each episode's MCP
    endpoint and token (`mcp_endpoints`); GET /runs/{id} shows them again only to a caller with
    the API token that created the run (docs/agents.md). The run belongs to the caller's token:
    only it or an admin token may cancel it (docs/security.md)."""
    if svc.settings.agent_isolation == "none":  # in-process agents are for the CLI only
        raise HTTPException(403, "agent isolation 'none' is refused over REST")
    try:
        # loading a catalog and probing endpoints take a while: keep the event loop running
        plan = await asyncio.to_thread(admit, spec, svc.settings, svc.catalogs, policy=api.policy)
        creator = token_key(token) if token is not None else None
        run = await asyncio.to_thread(store_plan, svc.store, plan, created_by=creator)
    except RequestInvalid as e:
        raise RequestValidationError(e.errors) from e
    except (SelectionError, PreflightError) as e:
        raise HTTPException(400, str(e)) from e
    out = S.run_out(run)
    if getattr(plan.agent_cls, "runs_in_orchestrator", False):
        out.mcp_endpoints = request.app.state.mcp.created(request, svc.store, run, plan)
    svc.scheduler.wake()
    return out


@router.get("/runs", response_model=list[S.RunListItem])
def list_runs(
    status: str | None = None,
    limit: int = Query(100, ge=1, le=1000),
    offset: int = Query(0, ge=0, le=MAX_OFFSET),
    svc: Services = Depends(services),
) -> list[S.RunListItem]:
    """Newest first, one page (`limit`, `offset`); each item without the run's options and
    target ids (those are at GET /runs/{id}); `imported` marks a run read from a file."""
    runs = svc.store.runs.latest(status=status, limit=limit, offset=offset)
    imported = svc.store.events.imported_runs([r.id for r in runs])
    return [S.run_list_item(r, r.id in imported) for r in runs]


@router.get("/runs/{run_id}", response_model=S.RunDetail, responses=NOT_FOUND)
def get_run(run_id: str, request: Request, svc: Services = Depends(services)) -> S.RunDetail:
    detail = S.run_detail(svc.store, get_run_or_404(svc, run_id))
    detail.mcp_endpoints = request.app.state.mcp.for_owner(request, svc.store, run_id)
    return detail


@router.get("/runs/{run_id}/episodes", response_model=list[S.EpisodeOut], responses=NOT_FOUND)
def run_episodes(
    run_id: str, status: str | None = None, svc: Services = Depends(services)
) -> list[S.EpisodeOut]:
    run = get_run_or_404(svc, run_id)
    eps = svc.store.episodes.of_run(run_id, status=[status] if status else None, with_answer=False)
    return [S.episode_out(e, len(run.target_ids)) for e in eps]


@router.post(
    "/runs/{run_id}/cancel",
    response_model=S.RunOut,
    responses={**ERRORS, **FORBIDDEN, **NOT_FOUND, **deps.error_reply(409)},
    dependencies=[Depends(require_token)],
)
async def cancel_run(
    run_id: str, svc: Services = Depends(services), token: str | None = Depends(caller_token)
) -> S.RunOut:
    """Cancel a run and its floor run: only with the token that started it or an admin token
    (403 otherwise), when tokens are configured."""
    # async: the scheduler's tasks may only be cancelled from the event loop's thread
    run = get_run_or_404(svc, run_id)
    may_change_run(svc.settings, run, token)
    if not svc.scheduler.cancel_run(run_id):
        raise HTTPException(409, f"run {run_id} has already ended ({run.status})")
    return S.run_out(get_run_or_404(svc, run_id))


@router.get(
    "/runs/{run_id}/report",
    response_model=S.ReportOut,
    responses={**NOT_FOUND, **deps.error_reply(501)},
)
def run_report(
    run_id: str,
    epoch_reducer: EpochReducer | None = Query(
        None, description="reduce repeated samples this way instead of as the run's spec says"
    ),
    svc: Services = Depends(services),
) -> S.ReportOut:
    """The evaluator's report (success rates per category, with counts and errors)."""
    run = get_run_or_404(svc, run_id)
    try:
        return S.build_report(svc.store, run, epoch_reducer)
    except S.ReportUnavailable as e:
        raise HTTPException(501, str(e)) from e
