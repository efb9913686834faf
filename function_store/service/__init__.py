"""The target service (an HTTP app serving catalog targets, outputs only) and its client."""

from function_store.service.client import TargetServiceClient, TargetServiceError
from function_store.service.models import CallRequest, CallResponse, ServiceError
from function_store.service.settings import ServiceSettings

__all__ = [
    "CallRequest",
    "CallResponse",
    "ServiceError",
    "ServiceSettings",
    "TargetServiceClient",
    "TargetServiceError",
]
