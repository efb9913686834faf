"""The entity and relation families' catalog sources: FIND's release (find-v1), our generator
(find-gen) and an original FIND dataset folder (find-import), one function per family and source.
`Benchmark.sources` of ENTITIES and RELATIONS names these functions."""

from __future__ import annotations

from interp_harness.function_store.catalog import CatalogOptions
from interp_harness.function_store.entities_relations import find_folder, find_gen, find_v1
from interp_harness.function_store.find_import import folder_source
from interp_harness.function_store.models import Family
from interp_harness.sdk import Target


def entities_find_v1(family: Family, options: CatalogOptions) -> list[Target]:
    return find_v1.load_entities()


def relations_find_v1(family: Family, options: CatalogOptions) -> list[Target]:
    return find_v1.load_relations()


def entities_find_gen(family: Family, options: CatalogOptions) -> list[Target]:
    return find_gen.generate_entities(options.gen_seed)


def relations_find_gen(family: Family, options: CatalogOptions) -> list[Target]:
    return find_gen.generate_relations(options.gen_seed)


entities_find_import = folder_source(find_folder.ENTITIES)
relations_find_import = folder_source(find_folder.RELATIONS)
