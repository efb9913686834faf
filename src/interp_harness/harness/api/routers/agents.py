"""GET /agents: the agents an API caller may name."""

from __future__ import annotations

from fastapi import APIRouter

from interp_harness.harness.api import schemas as S

router = APIRouter()


@router.get("/agents", response_model=list[S.AgentOut])
def list_agents() -> list[S.AgentOut]:
    try:
        from interp_harness.agents.registry import list_agents as registry_list
    except ImportError:
        return []
    return [S.AgentOut.model_validate(a.model_dump()) for a in registry_list()]
