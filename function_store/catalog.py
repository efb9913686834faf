"""The catalog: lists, filters and samples targets from registered sources.

A source is a function `(family, options) -> list[Target]` registered under a dataset name
(`find-v1`, `find-gen`, `find-import`). Sources load lazily, one (dataset, family, seed) at a time.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Iterable
from pathlib import Path

from pydantic import BaseModel, Field

from function_store.models import Family, Target

FAMILIES: tuple[Family, ...] = ("numeric", "strings", "entities", "relations", "neurons", "ravel")
# datasets whose ids do not name the family: `neuron/<model>/<layer>:<index>`,
# `ravel/<model>/<entity-type>/<attribute>`
FIXED_FAMILY: dict[str, Family] = {"neuron": "neurons", "ravel": "ravel"}


def _serves(dataset: str, family: str) -> bool:
    """A fixed-family dataset serves only its family; the FIND datasets only FIND's four."""
    fixed = FIXED_FAMILY.get(dataset)
    return family == fixed if fixed else family not in FIXED_FAMILY.values()


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
_SOURCES: dict[str, Source] = {}
_SOURCE_MODULES = {
    "find-v1": "function_store.find_v1",
    "find-gen": "function_store.find_gen",
    "find-import": "function_store.find_import",
    "neuron": "function_store.neurons.targets",
    "ravel": "function_store.ravel.targets",
}


def register_source(name: str) -> Callable[[Source], Source]:
    def deco(fn: Source) -> Source:
        _SOURCES[name] = fn
        return fn

    return deco


def dataset_names() -> list[str]:
    # built-in datasets, then sources registered by plugins (register_source)
    return list(dict.fromkeys([*_SOURCE_MODULES, *_SOURCES]))


def _source(name: str) -> Source:
    if name not in _SOURCES and name in _SOURCE_MODULES:
        importlib.import_module(_SOURCE_MODULES[name])
    if name not in _SOURCES:
        raise UnknownDataset(f"unknown dataset {name!r}; known: {', '.join(dataset_names())}")
    return _SOURCES[name]


class UnknownTarget(KeyError):
    def __str__(self) -> str:  # KeyError quotes its message otherwise
        return str(self.args[0])


class UnknownDataset(ValueError):
    pass


def parse_id(target_id: str) -> tuple[str, Family, int | None]:
    """`find-v1/numeric/f00473` -> (find-v1, numeric, None); `find-gen/strings/s3/f00012` -> seed 3."""
    parts = target_id.split("/")
    if parts[0] in FIXED_FAMILY and len(parts) in (3, 4):
        return parts[0], FIXED_FAMILY[parts[0]], None
    if len(parts) < 3 or parts[1] not in FAMILIES:
        raise UnknownTarget(_unknown_msg(target_id))
    seed = None
    if len(parts) == 4:
        if not (parts[2].startswith("s") and parts[2][1:].isdigit()):
            raise UnknownTarget(_unknown_msg(target_id))
        seed = int(parts[2][1:])
    return parts[0], parts[1], seed  # type: ignore[return-value]


def _unknown_msg(target_id: str) -> str:
    return (
        f"unknown target id {target_id!r}. Ids look like find-v1/numeric/f00473 or "
        "find-gen/strings/s0/f00012; list them with `harness targets list [--dataset D] [--family F]`"
    )


class Catalog:
    def __init__(self, options: CatalogOptions | None = None) -> None:
        self.options = options or CatalogOptions()
        self._loaded: dict[tuple[str, str, int], list[Target]] = {}

    def _load(self, dataset: str, family: Family, seed: int | None = None) -> list[Target]:
        seed = self.options.gen_seed if seed is None else seed
        key = (dataset, family, seed if dataset == "find-gen" else 0)
        if key not in self._loaded:
            opts = (
                self.options
                if seed == self.options.gen_seed
                else self.options.model_copy(update={"gen_seed": seed})
            )
            self._loaded[key] = _source(dataset)(family, opts)
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
        if family is not None and family not in FAMILIES:
            raise ValueError(f"unknown family {family!r}; known: {', '.join(FAMILIES)}")
        datasets = (
            [dataset]
            if dataset
            else [d for d in dataset_names() if d != "find-import" or self.options.import_root]
        )
        for d in datasets:
            _source(d)  # unknown dataset -> UnknownDataset
        families = [family] if family else list(FAMILIES)
        out: list[Target] = []
        for d in datasets:
            for f in families:
                if not _serves(d, f):
                    continue
                out.extend(t for t in self._load(d, f) if variant is None or t.variant == variant)
        return out

    def get(self, target_id: str) -> Target:
        dataset, family, seed = parse_id(target_id)
        if dataset not in _SOURCE_MODULES and dataset not in _SOURCES:
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
