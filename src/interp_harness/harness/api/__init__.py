"""The REST API. `uvicorn --factory interp_harness.harness.api:create_app` or `harness serve` runs it."""

from interp_harness.harness.api.app import create_app

__all__ = ["create_app"]
