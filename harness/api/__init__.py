"""The REST API. `uvicorn --factory harness.api:create_app` or `harness serve` runs it."""

from harness.api.app import create_app

__all__ = ["create_app"]
