"""The catalog of a built SAE: `<cache>/sae/<name>/harness_catalog.json` beside its SAELens files.

It records how the SAE was built (options and their hash, the reconstruction report) and a seeded
sample of its live latents, each with its density, top tokens, reference explanation and held-out
examples (every token's activation, computed with the saved SAE as the service computes them).
The top tokens and the reference come from held-out texts disjoint from the examples'.
The scorer reads the examples; no service is needed at scoring time.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from interp_harness.function_store.datasets import DataUnavailable, cache_dir
from interp_harness.model_services.intervention.sae_names import (
    NAME_RE,  # the service's rule, one copy
)

CATALOG_FILE = "harness_catalog.json"
BUILD_VERSION = 2  # raised when the build changes its result: older cached builds are redone
# 2: references drawn from held-out texts disjoint from the scoring texts (issue 50 item 2)
BUILD_HINT = "build one with `harness sae build`"


# the hook sites an SAE may read (the contract's SAELens hook names)
SaeComponent = Literal["block_input", "block_output", "attention_output", "mlp_output"]


class BuildOptions(BaseModel):
    """How `harness sae build` trains an SAE (function_store/sae/build.py); recorded in the
    catalog with its hash, which decides whether a cached build is reused."""

    model: str = "smollm2"
    layer: int = Field(12, ge=0)  # SmolLM2-135M has 30 layers: the middle of the stack
    component: SaeComponent = "block_output"
    d_sae: int = Field(2048, ge=2)  # about 4x SmolLM2's 576
    k: int = Field(32, ge=1)  # TopK's active latents per token
    tokens: int = Field(24_000, ge=16)  # training tokens (the held-out split comes on top)
    steps: int = Field(1000, ge=1)
    batch_size: int = Field(384, ge=1)
    lr: float = Field(1e-3, gt=0)
    seed: int = 0
    corpora: tuple[str, ...] = ("python-docs", "released")
    held_out: float = Field(0.2, gt=0, lt=1)  # share of texts held out (seeded hash)
    # scoring texts (report, examples); as many again, disjoint, for the reference explanations
    max_held_out_texts: int = Field(400, ge=2)
    n_latents: int = Field(64, ge=1)  # latents in the catalog
    min_density: float = 1e-4  # below: dead
    max_density: float = 0.1  # above: near-dense
    n_activating: int = Field(10, ge=1)  # held-out examples per latent
    n_non_activating: int = Field(10, ge=1)
    name: str | None = Field(None, pattern=NAME_RE.pattern)  # default `<model>-l<layer>-topk`
    device: str = "auto"
    force: bool = False  # rebuild even when the cached catalog has the same options

    def sae_name(self) -> str:
        return self.name or f"{self.model.replace('/', '--')}-l{self.layer}-topk"

    def options_hash(self) -> str:
        """What decides the build's result (not `force`, nor the device)."""
        keep = self.model_dump(mode="json", exclude={"force", "device"})
        keep["build_version"] = BUILD_VERSION
        return hashlib.sha256(json.dumps(keep, sort_keys=True).encode()).hexdigest()[:16]


class Example(BaseModel):
    text: str
    tokens: list[str]  # as the intervention service's /v1/activations lists them
    acts: list[float]  # the latent's activation on every token


class LatentRecord(BaseModel):
    latent: int
    density: float  # fraction of held-out tokens with activation > 0
    max_act: float
    # (token, times active, max activation) over the reference texts, none of them scored
    top_tokens: list[tuple[str, int, float]]
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
    reference_texts: int = 0  # held-out texts the reference explanations come from
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
    # the held-out texts the report and examples come from, recorded with the catalog so that
    # the examples can be traced to their texts without rebuilding the corpus
    held_out: list[str] = Field(default_factory=list)
    # the held-out texts the reference explanations come from: none of them is in `held_out`
    reference_texts: list[str] = Field(default_factory=list)


def sae_root() -> Path:
    return cache_dir() / "sae"


def sae_dir(name: str) -> Path:
    if not NAME_RE.match(name):
        raise ValueError(f"SAE name {name!r}: letters, digits, '_', '.', '-' (not first) only")
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
