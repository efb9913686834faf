"""The catalog of a built SAE: `<cache>/sae/<name>/harness_catalog.json` beside its SAELens files.

It records how the SAE was built (options and their hash, the reconstruction report) and a seeded
sample of its live latents, each with its density, top tokens, reference explanation and held-out
examples (every token's activation, computed with the saved SAE as the service computes them).
The scorer reads the examples; no service is needed at scoring time.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from function_store.datasets import DataUnavailable, cache_dir

CATALOG_FILE = "harness_catalog.json"
BUILD_HINT = "build one with `harness sae build`"
NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")  # the service's rule for SAE names (no paths)


class Example(BaseModel):
    text: str
    tokens: list[str]  # as the intervention service's /v1/activations lists them
    acts: list[float]  # the latent's activation on every token


class LatentRecord(BaseModel):
    latent: int
    density: float  # fraction of held-out tokens with activation > 0
    max_act: float
    top_tokens: list[tuple[str, int, float]]  # (token, times active, max activation)
    reference: str  # `fires on "x", "y"`: the reference explanation (hidden ground truth)
    activating: list[Example] = Field(default_factory=list)
    non_activating: list[Example] = Field(default_factory=list)


class BuildReport(BaseModel):
    fve: float  # fraction of variance explained on held-out tokens
    l0: float  # mean number of active latents per held-out token
    dead: int  # latents below the density floor (or never active) on held-out tokens
    dense: int  # latents above the density ceiling
    tokens: int  # training tokens
    held_out_tokens: int
    train_texts: int
    held_out_texts: int
    steps: int
    seconds: float  # the whole build
    read_seconds: float = 0.0  # reading the training activations
    train_seconds: float = 0.0
    device: str


class SAECatalog(BaseModel):
    sae: str  # the SAE's name (its folder; the service serves it by this name)
    model: str
    layer: int
    component: str
    hook_name: str
    architecture: str
    d_in: int
    d_sae: int
    k: int | None = None  # TopK's k
    options: dict[str, Any] = Field(default_factory=dict)
    options_hash: str = ""
    report: BuildReport
    latents: list[LatentRecord]
    # the held-out texts the report and examples come from (the python-docs corpus depends on
    # the modules a process has imported, so it is recorded rather than recomputed)
    held_out: list[str] = Field(default_factory=list)


def sae_root() -> Path:
    return cache_dir() / "sae"


def sae_dir(name: str) -> Path:
    if not NAME_RE.match(name):
        raise ValueError(f"SAE name {name!r}: letters, digits, '_', '.', '-' only")
    return sae_root() / name


def load(name: str) -> SAECatalog:
    """The catalog of built SAE `name`; DataUnavailable (naming the build command) if missing."""
    path = sae_dir(name) / CATALOG_FILE
    if not path.is_file():
        raise DataUnavailable(f"SAE {name!r} is not built ({path} missing): {BUILD_HINT}")
    return SAECatalog.model_validate_json(path.read_text(encoding="utf-8"))


def built() -> list[str]:
    """Names of the SAEs with a catalog, sorted."""
    root = sae_root()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / CATALOG_FILE).is_file())
