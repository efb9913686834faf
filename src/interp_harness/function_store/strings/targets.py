"""The string family's catalog sources: FIND's release (find-v1), our generator (find-gen) and an
original FIND dataset folder (find-import). `Benchmark.sources` names these functions."""

from __future__ import annotations

from interp_harness.function_store.catalog import CatalogOptions
from interp_harness.function_store.find_import import folder_source
from interp_harness.function_store.models import Family
from interp_harness.function_store.strings import find_gen as gen
from interp_harness.function_store.strings import find_v1 as v1
from interp_harness.function_store.strings.find_folder import FOLDER
from interp_harness.sdk import Target


def find_v1(family: Family, options: CatalogOptions) -> list[Target]:
    return v1.load(options)


def find_gen(family: Family, options: CatalogOptions) -> list[Target]:
    return gen.generate(options.gen_seed, options.gen.n_strings, options.gen.strings_p_atomic)


find_import = folder_source(FOLDER)
