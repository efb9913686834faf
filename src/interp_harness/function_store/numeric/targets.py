"""The numeric family's catalog sources: FIND's release (find-v1), our generator (find-gen) and an
original FIND dataset folder (find-import). `Benchmark.sources` names these functions."""

from __future__ import annotations

from pathlib import Path

from interp_harness.function_store.catalog import CatalogOptions
from interp_harness.function_store.find_import import FolderKind, folder_source
from interp_harness.function_store.models import Family
from interp_harness.function_store.numeric import find_gen as gen
from interp_harness.function_store.numeric import find_v1 as v1
from interp_harness.sdk import PublicMeta, Target


def find_v1(family: Family, options: CatalogOptions) -> list[Target]:
    return v1.load(options)


def find_gen(family: Family, options: CatalogOptions) -> list[Target]:
    return gen.generate(options.gen_seed, options.gen)


def _folder_variant(folder: Path, code: str, name_dict: dict[str, str]) -> str:
    """A folder with MLP weights is an MLP target; else the file func_name_dict.json serves."""
    if (folder / "mlp_approx_model.pt").exists():
        return "mlp"
    return v1.VARIANT_OF_FILE.get(name_dict.get(folder.name, ""), "unknown")


def _folder_public(variant: str) -> PublicMeta:
    prompt = "numeric_mlp" if variant == "mlp" else "numeric"
    return PublicMeta(input_kind="number", prompt_family=prompt, value_range=(-128.0, 128.0))


find_import = folder_source(
    FolderKind(category="numeric", variant=_folder_variant, public=_folder_public)
)
