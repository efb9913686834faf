"""Request and response bodies of the target service (the contract in docs/architecture.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator

from interp_harness.function_store.models import CallOutput


def utf8_clean(text: str) -> str:
    """Agent text decoded with surrogateescape (non-UTF-8 bytes) cannot be sent as JSON: each
    such code point becomes U+FFFD, as a UTF-8 decoder with errors="replace" would show it."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


class CallRequest(BaseModel):
    inputs: list[str] = Field(default_factory=list)

    @field_validator("inputs")
    @classmethod
    def _utf8(cls, v: list[str]) -> list[str]:
        return [utf8_clean(x) for x in v]


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
