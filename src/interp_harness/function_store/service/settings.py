"""Target service settings, from environment variables (pydantic-settings)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from interp_harness.function_store.call_clock import DEFAULT_CEILING_S


class ServiceSettings(BaseSettings):
    """`HARNESS_SERVICE_*` variables. The sandbox sets FD (bwrap), UDS or PORT (docker)."""

    model_config = SettingsConfigDict(env_prefix="HARNESS_SERVICE_", populate_by_name=True)

    targets_dir: Path = Path("/sandbox")  # *.json files, one Target each (hidden part included)
    fd: int | None = Field(None, ge=3)  # serve on this inherited listening socket (bwrap) ...
    uds: str | None = None  # ... or listen on this Unix socket ...
    host: str = "0.0.0.0"  # ... or on host:port
    port: int = 8080
    # per call (all inputs of one command): the base every call gets; a family's record adds a
    # budget for the call's size, and no call runs past the ceiling (interp_harness.function_store.call_clock)
    call_timeout_s: float = Field(10.0, gt=0)
    call_ceiling_s: float = Field(DEFAULT_CEILING_S, gt=0)
    max_inputs: int = Field(1000, ge=1)  # per call
    max_input_chars: int = Field(10_000, ge=1)  # per input
    max_output_bytes: int = Field(1_000_000, ge=1)  # per call, all outputs together
    preload: bool = True  # build every runner at start-up (a warm instance answers at once)
    backbone_uds: str | None = Field(None, validation_alias="HARNESS_BACKBONE_UDS")
    backbone_url: str | None = Field(None, validation_alias="HARNESS_BACKBONE_URL")
