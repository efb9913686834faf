"""Async client of the target service, over a Unix socket (`http+unix://<quoted path>`) or TCP."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import unquote

import httpx

from interp_harness.function_store.models import CallOutput
from interp_harness.function_store.service.models import CallRequest, CallResponse


class TargetServiceError(RuntimeError):
    """A call that got no outputs. `category`: agent (bad input), target, or infrastructure."""

    def __init__(self, detail: str, category: str, status: int | None = None) -> None:
        super().__init__(detail)
        self.detail, self.category, self.status = detail, category, status


def transport_for(
    url: str, *, sync: bool = False
) -> tuple[str, httpx.BaseTransport | httpx.AsyncBaseTransport | None]:
    if url.startswith("http+unix://"):
        path = unquote(url[len("http+unix://") :])
        cls = httpx.HTTPTransport if sync else httpx.AsyncHTTPTransport
        return "http://sandbox", cls(uds=path)
    return url.rstrip("/"), None


def default_timeout_s() -> float:
    """A little longer than the longest a call may run in the service (the ceiling,
    HARNESS_SERVICE_CALL_CEILING_S, never below HARNESS_SERVICE_CALL_TIMEOUT_S; set by the
    operator), so the service's own error, naming the setting, arrives first."""
    from interp_harness.function_store.service.settings import ServiceSettings

    s = ServiceSettings()
    return max(30.0, max(s.call_ceiling_s, s.call_timeout_s) + 10.0)


class TargetServiceClient:
    def __init__(self, url: str, *, timeout_s: float | None = None) -> None:
        self.url = url
        base, transport = transport_for(url)
        self._client = httpx.AsyncClient(
            base_url=base, transport=transport, timeout=timeout_s or default_timeout_s()
        )

    async def healthz(self) -> bool:
        try:
            return (await self._client.get("/healthz")).status_code == 200
        except httpx.HTTPError:
            return False

    async def call(self, target_id: str, inputs: Sequence[str]) -> list[CallOutput]:
        body = CallRequest(inputs=list(inputs)).model_dump()
        try:
            r = await self._client.post(f"/targets/{target_id}/call", json=body)
        except httpx.HTTPError as e:
            raise TargetServiceError(
                f"target service unreachable ({type(e).__name__}: {e})", "infrastructure"
            ) from e
        if r.status_code != 200:
            try:
                data = r.json()
                detail, category = data["detail"], data.get("category", "target")
            except (ValueError, KeyError, TypeError):
                detail, category = f"HTTP {r.status_code}: {r.text[:200]}", "infrastructure"
            raise TargetServiceError(detail, category, r.status_code)
        return CallResponse.model_validate_json(r.content).outputs

    async def aclose(self) -> None:
        await self._client.aclose()
