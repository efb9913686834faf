"""The catalog: lists, filters and samples targets from the benchmark registry's sources.

A source is a function `(family, options) -> list[Target]`. A family's record names its sources
(`Benchmark.sources`: dataset -> `module:function`); a plugin may add a dataset for every family
with `register_source`. Sources load lazily, one (dataset, family, seed) at a time.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from pathlib import Path

from pydantic import BaseModel, Field

from interp_harness.function_store.benchmark import (
    benchmark,
    benchmarks,
    families,
    load_ref,
    unknown_name,
)
from interp_harness.function_store.models import Family, Target


def _fixed_datasets() -> dict[str, str]:
    """Datasets whose ids do not name the family (`<dataset>/<model>/...`) -> their one family."""
    return {d: b.family for b in benchmarks() for d in b.fixed_datasets}


class GenConfig(BaseModel):
    """Options of the find-gen generator. Defaults follow the FIND paper's proportions."""

    n_numeric: int = Field(1000, ge=0)
    n_strings: int = Field(1000, ge=0)
    numeric_p_atomic: float = Field(0.85, ge=0, le=1)
    numeric_p_noised: float = Field(0.15, ge=0, le=1)
    numeric_p_corrupted: float = Field(0.15, ge=0, le=1)
    numeric_p_mlp: float = Field(0.15, ge=0, le=1)
    strings_p_atomic: float = Field(0.30, ge=0, le=1)
    mlp_epochs: int = Field(10000, ge=1)


class CatalogOptions(BaseModel):
    gen_seed: int = 0
    gen: GenConfig = Field(default_factory=GenConfig)
    import_root: Path | None = None  # an original FIND dataset folder (find-import)


Source = Callable[[Family, CatalogOptions], list[Target]]
# datasets a plugin adds for every family whose ids name the family (`register_source`)
_SOURCES: dict[str, Source] = {}
_LISTED_WHEN = "_catalog_listed_when"


def register_source(name: str) -> Callable[[Source], Source]:
    """Add dataset `name` for every family whose ids name the family (`<name>/<family>/...`):
    the source is called with each such family and returns [] for those it does not serve."""

    def deco(fn: Source) -> Source:
        _SOURCES[name] = fn
        return fn

    return deco


def listed_when(condition: Callable[[CatalogOptions], bool]) -> Callable[[Source], Source]:
    """Mark a source as listed only when its dataset is named, or when `condition(options)` holds
    (e.g. a dataset read from a folder the caller configures)."""

    def deco(fn: Source) -> Source:
        setattr(fn, _LISTED_WHEN, condition)
        return fn

    return deco


def dataset_names() -> list[str]:
    # the records' datasets in registry order, then datasets registered by plugins
    named = [d for b in benchmarks() for d in b.sources]
    return list(dict.fromkeys([*named, *_SOURCES]))


def check_dataset(name: str) -> None:
    """UnknownDataset (naming the closest known dataset) when `name` is not one."""
    if name not in dataset_names():
        raise UnknownDataset(unknown_name("dataset", name, dataset_names()))


def _source(dataset: str, family: str) -> Source | None:
    """The source of `family` in `dataset`, or None when the dataset does not serve it."""
    record = benchmark(family)
    if dataset in record.sources:
        return load_ref(record.sources[dataset])
    if dataset in _SOURCES and not record.fixed_datasets and dataset not in _fixed_datasets():
        return _SOURCES[dataset]
    return None


class UnknownTarget(KeyError):
    def __str__(self) -> str:  # KeyError quotes its message otherwise
        return str(self.args[0])


class UnknownDataset(ValueError):
    pass


def parse_id(target_id: str) -> tuple[str, Family, int | None]:
    """`find-v1/numeric/f00473` -> (find-v1, numeric, None); `find-gen/strings/s3/f00012` -> seed 3;
    a fixed dataset's id (`<dataset>/<model>/...`) -> its family, no seed."""
    parts = target_id.split("/")
    fixed = _fixed_datasets()
    if parts[0] in fixed and len(parts) in (3, 4):
        return parts[0], fixed[parts[0]], None
    if len(parts) < 3 or parts[1] not in families():
        raise UnknownTarget(_unknown_msg(target_id))
    seed = None
    if len(parts) == 4:
        if not (parts[2].startswith("s") and parts[2][1:].isdigit()):
            raise UnknownTarget(_unknown_msg(target_id))
        seed = int(parts[2][1:])
    return parts[0], parts[1], seed


def _unknown_msg(target_id: str) -> str:
    return (
        f"unknown target id {target_id!r}. Ids look like <dataset>/<family>/<name>, "
        "<dataset>/<family>/s<seed>/<name> for a seeded dataset, or <dataset>/<model>/... for a "
        "dataset of one family; list them with `harness targets list [--dataset D] [--family F]`"
    )


class Catalog:
    def __init__(self, options: CatalogOptions | None = None) -> None:
        self.options = options or CatalogOptions()
        self._loaded: dict[tuple[str, str, int], list[Target]] = {}

    def _load(self, dataset: str, family: Family, seed: int | None = None) -> list[Target]:
        """One source's targets; [] where the dataset does not serve the family. Keyed by seed:
        only a seeded dataset's ids name another seed than the catalog's."""
        seed = self.options.gen_seed if seed is None else seed
        key = (dataset, family, seed)
        if key not in self._loaded:
            source = _source(dataset, family)
            opts = (
                self.options
                if seed == self.options.gen_seed
                else self.options.model_copy(update={"gen_seed": seed})
            )
            self._loaded[key] = source(family, opts) if source else []
        return self._loaded[key]

    def list(
        self,
        dataset: str | None = None,
        family: str | None = None,
        variant: str | None = None,
        ids: Iterable[str] | None = None,
    ) -> list[Target]:
        if ids is not None:
            return [self.get(i) for i in ids]
        if family is not None:
            benchmark(family)  # unknown family -> UnknownFamily (a ValueError)
        if dataset is not None:
            check_dataset(dataset)
        datasets = [dataset] if dataset else dataset_names()
        out: list[Target] = []
        for d in datasets:
            for f in [family] if family else families():
                source = _source(d, f)
                if source is None or (dataset is None and not _listed(source, self.options)):
                    continue
                out.extend(t for t in self._load(d, f) if variant is None or t.variant == variant)
        return out

    def get(self, target_id: str) -> Target:
        dataset, family, seed = parse_id(target_id)
        if dataset not in dataset_names():
            raise UnknownTarget(_unknown_msg(target_id))
        for t in self._load(dataset, family, seed):
            if t.id == target_id:
                return t
        raise UnknownTarget(_unknown_msg(target_id))

    def sample(self, n: int, seed: int = 0, **filters: str | None) -> list[Target]:
        pool = self.list(**filters)
        if n >= len(pool):
            return pool
        picked = sorted(random.Random(seed).sample(range(len(pool)), n))
        return [pool[i] for i in picked]


def _listed(source: Source, options: CatalogOptions) -> bool:
    condition = getattr(source, _LISTED_WHEN, None)
    return condition is None or condition(options)
