"""Catalog sources `circuits-lib` and `circuits-gen`: the built targets of each dataset (listed
only once built: `harness targets list` works without a build).

The hidden spec names the weights and the truth files (the scorer reads both; the runner gets
the weights inline, see runner.py) and the public shape; the hidden description is the asked
program's. Nothing about a target's program is in its public part, and the prompt is the same
for every target: the agent learns the vocabulary and the shape from the `task` command.
"""

from __future__ import annotations

from interp_harness.function_store.catalog import CatalogOptions, listed_when
from interp_harness.function_store.circuits import build as circuits_build
from interp_harness.function_store.datasets import DataUnavailable
from interp_harness.function_store.models import Family
from interp_harness.sdk import HiddenTruth, PublicMeta, Target, make_canary

FAMILY = "circuits"


def targets_of(dataset: str) -> list[Target]:
    cat = circuits_build.load_catalog(dataset)
    if cat is None or not cat.targets:
        raise DataUnavailable(
            f"{dataset} is not built in {circuits_build.root()}: {circuits_build.BUILD_HINT}"
        )
    d = circuits_build.root() / dataset
    out = []
    for row in cat.targets:
        spec = {
            "weights": str(d / row.weights),
            "truth": str(d / row.truth),
            "vocab": row.vocab,
            "max_len": row.max_len,
            "n_layers": row.n_layers,
            "n_heads": row.n_heads,
            "output_kind": row.output_kind,
        }
        hidden = HiddenTruth(
            runner="circuits", spec=spec, description=row.description, canary=make_canary(row.id)
        )
        out.append(
            Target(
                id=row.id,
                dataset=dataset,
                family=FAMILY,
                variant=dataset.removeprefix("circuits-"),
                public=PublicMeta(input_kind="string", prompt_family=FAMILY),
                hidden=hidden,
            )
        )
    return out


@listed_when(lambda _options: circuits_build.built(circuits_build.LIB))
def load_lib(family: Family, options: CatalogOptions) -> list[Target]:
    return targets_of(circuits_build.LIB) if family == FAMILY else []


@listed_when(lambda _options: circuits_build.built(circuits_build.GEN))
def load_gen(family: Family, options: CatalogOptions) -> list[Target]:
    return targets_of(circuits_build.GEN) if family == FAMILY else []
