"""GET /targets: public views of a dataset's targets (never ground truth)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException, Query

from interp_harness.harness.api import schemas as S
from interp_harness.harness.api.routers import deps
from interp_harness.harness.api.routers.deps import (
    ERRORS,
    MAX_OFFSET,
    ApiState,
    api_state,
    authorised,
    services,
)
from interp_harness.harness.services import Services

router = APIRouter()


@router.get(
    "/targets",
    response_model=list[S.PublicTargetOut],
    responses={**ERRORS, **deps.error_reply(503, "another new seed is being built")},
)
def list_targets(
    dataset: str = Query(..., description="find-v1 | find-gen | find-import | ..."),
    family: str | None = None,
    variant: str | None = None,
    gen_seed: int = Query(
        0,
        ge=0,
        lt=2**32,
        description="find-gen generator seed; one the server has not loaded yet needs a "
        "token (when tokens are configured), and is built one at a time",
    ),
    limit: int = Query(100, ge=1, le=10_000),
    offset: int = Query(0, ge=0, le=MAX_OFFSET),
    svc: Services = Depends(services),
    ok: bool = Depends(authorised),
    api: ApiState = Depends(api_state),
) -> list[S.PublicTargetOut]:
    """Public views only: never ground truth."""
    from interp_harness.function_store.catalog import UnknownDataset
    from interp_harness.function_store.datasets import DataUnavailable

    known = gen_seed == api.settings.gen_seed or gen_seed in svc.catalogs.seeds()
    if not known and not ok:
        raise HTTPException(
            401,
            f"gen_seed {gen_seed} is not loaded on this server; a new seed needs a bearer "
            f"token (loaded: {sorted({api.settings.gen_seed, *svc.catalogs.seeds()})})",
            headers={"WWW-Authenticate": "Bearer"},
        )
    if not known and not api.seed_builds.acquire(blocking=False):
        raise HTTPException(
            503, "another new gen_seed is being built; retry", headers={"Retry-After": "5"}
        )
    try:
        targets = svc.catalogs.get(gen_seed).list(dataset=dataset, family=family, variant=variant)
    except (UnknownDataset, DataUnavailable, ValueError) as e:
        raise HTTPException(400, str(e)) from e
    finally:
        if not known:
            api.seed_builds.release()
    return [t.public_view() for t in targets[offset : offset + limit]]
