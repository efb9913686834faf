"""The target service (an HTTP app serving catalog targets, outputs only) and its client."""

from interp_harness.targets.service.client import TargetServiceClient, TargetServiceError
from interp_harness.targets.service.models import CallRequest, CallResponse, ServiceError
from interp_harness.targets.service.settings import ServiceSettings

__all__ = [
    "CallRequest",
    "CallResponse",
    "ServiceError",
    "ServiceSettings",
    "TargetServiceClient",
    "TargetServiceError",
]
