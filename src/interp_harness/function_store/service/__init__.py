"""The target service (an HTTP app serving catalog targets, outputs only) and its client."""

from interp_harness.function_store.service.client import TargetServiceClient, TargetServiceError
from interp_harness.function_store.service.models import CallRequest, CallResponse, ServiceError
from interp_harness.function_store.service.settings import ServiceSettings

__all__ = [
    "CallRequest",
    "CallResponse",
    "ServiceError",
    "ServiceSettings",
    "TargetServiceClient",
    "TargetServiceError",
]
