"""`harness circuits build`: compile every target once into the cache.

Per target, `<cache>/circuits/<dataset>/<id with "/" as "--">.npz` (the served weights, plain
arrays: serving needs no jax) and `....truth.json` beside it (`CircuitTruth`: the hidden ground
truth, from the same compile as the weights). `<cache>/circuits/<dataset>/catalog.json` lists the
built targets (`BuiltTarget`), which is what the catalog source reads.

A target is its asked program (a library program for `circuits-lib`, a generated one for
`circuits-gen`) merged with 1 or 2 generated distractors over the same vocabulary and length,
then rotated (function_store/circuits/merge.py). Everything is drawn from the target's own seed,
so a build is reproducible, and a target whose truth file holds the same digest (its id, the
options, `BUILD_VERSION`) is not rebuilt: a second build is instant.

Ids: `circuits-lib/<program>/<k>` (k = 0..per_program-1), `circuits-gen/<seed>/<k>`.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from interp_harness.function_store.datasets import cache_dir

BUILD_VERSION = 1  # bump when the layout or the draws change: every target is rebuilt
LIB = "circuits-lib"
GEN = "circuits-gen"
DATASETS = (LIB, GEN)
BUILD_HINT = "build them with `harness circuits build`"
CATALOG_FILE = "catalog.json"

Value = str | int | float | bool


class BuildOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    per_program: int = 1  # circuits-lib targets per library program
    programs: list[str] | None = None  # library programs to build (None: all)
    gen_seed: int = 0
    gen_count: int = 20  # circuits-gen targets
    distractors: tuple[int, int] = (1, 2)  # how many distractors a target merges (drawn)


class CircuitTruth(BaseModel):
    """A target's hidden ground truth. Never reaches an agent."""

    model_config = ConfigDict(extra="forbid")

    id: str
    dataset: str
    digest: str
    circuit: list[str]  # the asked program's components
    components: list[str]  # every non-empty component (the scoring universe)
    program: str  # the asked program: its name and what it computes (lib) or its operations (gen)
    vocab: list[Value]
    max_len: int
    output_kind: Literal["categorical", "numerical"]
    output_values: list[Value]
    n_layers: int
    n_heads: int
    roles: dict[str, str]  # component -> the program variable it computes
    distractors: list[str]  # each distractor's operations
    owner: dict[str, int]  # component -> 0 (asked) or the distractor's number (1, 2)
    ops: list[str]  # the asked program's operation kinds
    seed: int
    seconds: float  # compile and merge time


class BuiltTarget(BaseModel):
    """One line of a dataset's catalog: what the source needs without opening the files."""

    id: str
    weights: str  # file name of the .npz, beside the catalog
    truth: str  # file name of the truth JSON
    description: str
    vocab: list[Value]
    max_len: int
    n_layers: int
    n_heads: int
    output_kind: str


class DatasetCatalog(BaseModel):
    dataset: str
    targets: list[BuiltTarget]


def root() -> Path:
    return cache_dir() / "circuits"


def safe(target_id: str) -> str:
    return target_id.replace("/", "--")


def load_truth(path: str | Path) -> CircuitTruth:
    return CircuitTruth.model_validate_json(Path(path).read_text(encoding="utf-8"))


def load_catalog(dataset: str) -> DatasetCatalog | None:
    path = root() / dataset / CATALOG_FILE
    if not path.is_file():
        return None
    return DatasetCatalog.model_validate_json(path.read_text(encoding="utf-8"))


def built(dataset: str) -> bool:
    cat = load_catalog(dataset)
    return bool(cat and cat.targets)


def _seed(*parts: object) -> int:
    h = hashlib.sha256(json.dumps(parts, default=str).encode()).digest()
    return int.from_bytes(h[:8], "big") >> 1


def _digest(target_id: str, options: BuildOptions) -> str:
    blob = json.dumps(
        {
            "id": target_id,
            "v": BUILD_VERSION,
            "distractors": list(options.distractors),
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def target_ids(options: BuildOptions) -> dict[str, list[str]]:
    from interp_harness.function_store.circuits.programs import LIBRARY

    names = options.programs if options.programs is not None else list(LIBRARY)
    unknown = [n for n in names if n not in LIBRARY]
    if unknown:
        raise ValueError(f"unknown library programs {unknown}; known: {', '.join(LIBRARY)}")
    return {
        LIB: [f"{LIB}/{n}/{k}" for n in names for k in range(options.per_program)],
        GEN: [f"{GEN}/{options.gen_seed}/{k}" for k in range(options.gen_count)],
    }


class Built(BaseModel):
    """What building one target gave (the merged model stays in memory for tests)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    truth: CircuitTruth
    merged: Any = None
    asked: Any = None  # the asked program's own compile
    sop: Any = None  # the asked RASP program (tests evaluate it)


def build_target(target_id: str, options: BuildOptions) -> Built:
    """Compile and merge one target (no file written)."""
    from interp_harness.function_store.circuits.compile import compile_program
    from interp_harness.function_store.circuits.generator import generate
    from interp_harness.function_store.circuits.merge import merge
    from interp_harness.function_store.circuits.programs import LIBRARY

    t0 = time.perf_counter()
    dataset, name, k = target_id.split("/")
    seed = _seed(dataset, name, k, BUILD_VERSION)
    rng = np.random.default_rng(seed)
    if dataset == LIB:
        lp = LIBRARY[name]
        sop = lp.make()
        asked = compile_program(sop, lp.vocab, lp.max_len)
        program, ops = f"{name}: {lp.description}", [name]
        vocab, max_len = lp.vocab, lp.max_len
    else:
        while True:  # an asked program with at least one head: a circuit, not only MLPs
            gp, asked, _ = generate(rng)
            if any("H" in c for c in asked.roles):
                break
        sop, program, ops = gp.sop, gp.description, gp.ops
        vocab, max_len = gp.vocab, gp.max_len
    lo, hi = options.distractors
    distractors = [
        generate(rng, vocab, max_len, n_ops=(1, 3)) for _ in range(int(rng.integers(lo, hi + 1)))
    ]
    merged = merge([asked] + [c for _, c, _ in distractors], seed=int(rng.integers(2**31)))
    owner = dict(merged.owner)
    components = sorted(owner, key=_component_order)
    truth = CircuitTruth(
        id=target_id,
        dataset=dataset,
        digest=_digest(target_id, options),
        circuit=[c for c in components if owner[c] == 0],
        components=components,
        program=program,
        vocab=list(merged.meta.vocab),
        max_len=max_len,
        output_kind=merged.meta.output_kind,
        output_values=list(merged.meta.output_values),
        n_layers=merged.meta.n_layers,
        n_heads=merged.meta.n_heads,
        roles={c: merged.roles[c] for c in components},
        distractors=[p.description for p, _, _ in distractors],
        owner={c: owner[c] for c in components},
        ops=ops,
        seed=seed,
        seconds=time.perf_counter() - t0,
    )
    return Built(truth=truth, merged=merged, asked=asked, sop=sop)


def _component_order(name: str) -> tuple[int, int]:
    layer, _, rest = name[1:].partition("H") if "H" in name else (name[1:-3], "", "")
    return int(layer), int(rest) if rest else 10**6


def _paths(dataset: str, target_id: str) -> tuple[Path, Path]:
    d = root() / dataset
    return d / f"{safe(target_id)}.npz", d / f"{safe(target_id)}.truth.json"


def build(
    options: BuildOptions | None = None,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
) -> dict[str, list[CircuitTruth]]:
    """Build (or find in the cache) every target; writes the weights, truths and catalogs."""
    options = options or BuildOptions()
    say = progress or (lambda _line: None)
    out: dict[str, list[CircuitTruth]] = {}
    for dataset, ids in target_ids(options).items():
        truths = []
        for i, tid in enumerate(ids, 1):
            npz, tj = _paths(dataset, tid)
            digest = _digest(tid, options)
            if not force and npz.is_file() and tj.is_file():
                cached = load_truth(tj)
                if cached.digest == digest:
                    truths.append(cached)
                    say(f"[{dataset} {i}/{len(ids)}] {tid}: cached")
                    continue
            b = build_target(tid, options)
            # here, not at the top: every `harness` command imports this module, few need torch
            from interp_harness.model_services.intervention.compiled import save_npz

            save_npz(npz, b.merged.arrays, b.merged.meta)
            tj.write_text(b.truth.model_dump_json(indent=1), encoding="utf-8")
            truths.append(b.truth)
            t = b.truth
            say(
                f"[{dataset} {i}/{len(ids)}] {tid}: {t.n_layers} layers x {t.n_heads} heads, "
                f"{len(t.components)} components, {t.seconds:.2f} s"
            )
        _write_catalog(dataset, truths)
        out[dataset] = truths
    return out


def _write_catalog(dataset: str, truths: list[CircuitTruth]) -> None:
    """The catalog lists the targets of this build and any built before (another seed's)."""
    d = root() / dataset
    d.mkdir(parents=True, exist_ok=True)
    old = load_catalog(dataset)
    rows = {t.id: t for t in (old.targets if old else [])}
    for t in truths:
        npz, tj = _paths(dataset, t.id)
        rows[t.id] = BuiltTarget(
            id=t.id,
            weights=npz.name,
            truth=tj.name,
            description=t.program,
            vocab=t.vocab,
            max_len=t.max_len,
            n_layers=t.n_layers,
            n_heads=t.n_heads,
            output_kind=t.output_kind,
        )
    cat = DatasetCatalog(dataset=dataset, targets=sorted(rows.values(), key=lambda r: r.id))
    tmp = d / (CATALOG_FILE + ".tmp")
    tmp.write_text(cat.model_dump_json(indent=1), encoding="utf-8")
    tmp.replace(d / CATALOG_FILE)
