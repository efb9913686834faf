"""Request and response bodies of the target service (the contract in DESIGN.md §4)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from function_store.models import CallOutput


class CallRequest(BaseModel):
    inputs: list[str] = Field(default_factory=list)


class CallResponse(BaseModel):
    target_id: str
    outputs: list[CallOutput]


class ServiceError(BaseModel):
    """Every non-2xx answer. `category` follows the harness's error states."""

    detail: str
    category: Literal["agent", "target", "infrastructure"]


class Health(BaseModel):
    status: Literal["ok"] = "ok"
    targets: int
    ready: bool  # every runner built (a call may still be served before: it waits for its own)
