"""How targets and scorers reach the intervention service: the URL (the sandbox's forwarded
endpoint, else the operator's HARNESS_INTERVENTION_URL) and a client checked to serve the target's
model. Shared by every family whose targets read a model through the service."""

from __future__ import annotations

import os

from interp_harness.function_store.runtime import NoBackboneConfigured, RuntimeContext
from interp_harness.model_services.intervention.client import (
    InterventionClient,
    InterventionError,
    InterventionSettings,
)
from interp_harness.model_services.intervention.preflight import SERVED_AS
from interp_harness.model_services.intervention.schemas import ModelInfo


def intervention_url(ctx: RuntimeContext | None) -> str:
    """The forwarded endpoint inside a sandbox (the one extra endpoint a service may reach), else
    HARNESS_INTERVENTION_URL (operator)."""
    url = (ctx.extra.get("backbone_url") if ctx else None) or os.environ.get(
        "HARNESS_INTERVENTION_URL"
    )
    if not url:
        raise NoBackboneConfigured(
            "no intervention service configured: set HARNESS_INTERVENTION_URL "
            "(e.g. `harness intervention serve --model smollm2`)"
        )
    return url


def connect(model: str, ctx: RuntimeContext | None) -> tuple[InterventionClient, ModelInfo]:
    """A client of the configured service (the operator's retry settings, the sandbox's URL),
    checked to serve `model`; with the served model's info. Raises InterventionError."""
    base = InterventionSettings.from_env()
    url = intervention_url(ctx)
    client = InterventionClient(
        base.model_copy(update={"url": url}) if base else InterventionSettings(url=url)
    )
    try:
        info = client.model()
        if info.id not in SERVED_AS.get(model, (model,)):
            raise InterventionError(f"service serves {info.id!r}, not {model!r}")
    except Exception:
        client.close()
        raise
    return client, info


def connect_url(model: str, url: str | None) -> tuple[InterventionClient, ModelInfo]:
    """`connect` for a scorer: the scoring context's service `url`, else HARNESS_INTERVENTION_URL."""
    return connect(model, RuntimeContext(extra={"backbone_url": url}) if url else None)
