"""The REST API. `uvicorn --factory interp_harness.orchestrator.api:create_app` or `harness serve` runs it."""

from interp_harness.orchestrator.api.app import create_app

__all__ = ["create_app"]
