"""Catalog source `sae`: one target per catalog latent of every built SAE, id
`sae/<model>/<sae>/<latent>`.

The latent's identity (SAE name, layer, latent index) lives in the id and the hidden spec only,
and its reference explanation is the hidden description: the task prompt is the same for every
latent and the runner's replies carry tokens and values.
"""

from __future__ import annotations

from interp_harness.function_store.catalog import CatalogOptions, listed_when
from interp_harness.function_store.datasets import DataUnavailable
from interp_harness.function_store.models import Family, model_target
from interp_harness.function_store.sae import catalog as sae_catalog
from interp_harness.sdk import Target

FAMILY = "sae"


def sae_id(model: str, sae: str, latent: int) -> str:
    return f"sae/{model.replace('/', '--')}/{sae}/{latent}"


def targets_of(cat: sae_catalog.SAECatalog) -> list[Target]:
    out = []
    for r in cat.latents:
        spec = {
            "model": cat.model,
            "sae": cat.sae,
            "layer": cat.layer,
            "component": cat.component,
            "latent": r.latent,
            "density": r.density,
        }
        tid = sae_id(cat.model, cat.sae, r.latent)
        out.append(model_target(tid, "sae", FAMILY, cat.model, "sae", spec, r.reference))
    return out


# listed among all datasets only once an SAE is built: `harness targets list` works without one
@listed_when(lambda _options: bool(sae_catalog.built()))
def load(family: Family, options: CatalogOptions) -> list[Target]:
    if family != FAMILY:
        return []
    names = sae_catalog.built()
    if not names:
        raise DataUnavailable(
            f"no SAE is built in {sae_catalog.sae_root()}: {sae_catalog.BUILD_HINT}"
        )
    return [t for name in names for t in targets_of(sae_catalog.load(name))]
