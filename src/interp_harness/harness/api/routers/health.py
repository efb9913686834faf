"""GET /healthz."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from sqlalchemy import text

from interp_harness.harness.api import schemas as S
from interp_harness.harness.api.routers.deps import services
from interp_harness.harness.services import Services
from interp_harness.harness.store import current_revision

router = APIRouter()


@router.get("/healthz", response_model=S.HealthOut)
def healthz(svc: Services = Depends(services)) -> S.HealthOut:
    with svc.store.engine.connect() as c:
        c.execute(text("SELECT 1"))
    return S.HealthOut(
        status="ok",
        database=svc.store.engine.dialect.name,
        schema_revision=current_revision(svc.store.engine),
        sandbox=svc.settings.sandbox,
    )
