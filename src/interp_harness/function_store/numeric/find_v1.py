"""find-v1 numeric: the 1000 released FIND numeric functions, from `data.json` and
`func_name_dict.json`, served with the release's exact semantics (quirks included)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from interp_harness.function_store.catalog import CatalogOptions
from interp_harness.function_store.datasets import data_path
from interp_harness.function_store.numeric.assemble import numeric_target
from interp_harness.function_store.numeric.families import COMPOSE_OPS
from interp_harness.function_store.numeric.mlp import find_v1_weights_path, missing_weights_reason
from interp_harness.sdk import Target

#: func_name_dict.json value -> our variant name
VARIANT_OF_FILE = {
    "load_mlp.py": "mlp",
    "function_code.py": "clean",
    "noised_function_code.py": "noised",
    "corrupted_function_code.py": "corrupted",
}


@lru_cache(maxsize=4)
def _read(data_file: Path, names_file: Path) -> tuple[list[dict[str, Any]], dict[str, str]]:
    return json.loads(data_file.read_text()), json.loads(names_file.read_text())


def function_spec(record: dict[str, Any]) -> dict[str, Any]:
    """A data.json record's function as our spec, e.g. `relu;linear;multiply_two` ->
    {"name": "multiply_two", "operands": [{"name": "relu", ...}, {"name": "linear", ...}]}."""
    head = record["name"].split("(", 1)[0]
    parts = head.split(";")
    if len(parts) == 3 and parts[2] in COMPOSE_OPS:
        p1, p2 = record["params"]
        return {
            "name": parts[2],
            "operands": [{"name": parts[0], "params": p1}, {"name": parts[1], "params": p2}],
        }
    if len(parts) != 1:
        raise ValueError(f"unexpected numeric function name {record['name']!r}")
    return {"name": head, "params": record["params"]}


def release_corruption(record: dict[str, Any]) -> dict[str, Any]:
    # the release stores the noise mean under "std" (`sample_corruption`); we call it what it is
    cp = record["corruption_params"]
    return {"type": record["corruption_type"], "boundary": list(cp["boundary"]), "mean": cp["std"]}


def target_from_record(
    record: dict[str, Any], served_file: str, import_root: Path | None = None
) -> Target:
    fdir = record["dir"]
    variant = VARIANT_OF_FILE[served_file]
    fn = function_spec(record)
    mlp = None
    reason = None
    if variant == "mlp":
        path = find_v1_weights_path(fdir, import_root)
        mlp = {"dir": fdir, "weights_path": str(path) if path else None}
        reason = None if path else missing_weights_reason(fdir)
    release = {
        "name": record["name"],
        "type": record["type"],
        "approx_mse_error": record["approx_mse_error"],
        "noise_type": record["noise_type"],
        "corruption": release_corruption(record),
        "error_code_generated": record.get("error_code_generated"),
        "served_file": served_file,
    }
    return numeric_target(
        target_id=f"find-v1/numeric/{fdir}",
        dataset="find-v1",
        variant=variant,
        fn=fn,
        domain=list(record["domain"]),
        noise=record["noise_type"] if variant == "noised" else None,
        corruption=release_corruption(record) if variant == "corrupted" else None,
        release=True,
        mlp=mlp,
        extra_spec={"release": release},
        unavailable_reason=reason,
    )


def load(options: CatalogOptions) -> list[Target]:
    """The 1000 released functions, in folder order."""
    records, served = _read(
        data_path("find/numeric/data.json"), data_path("find/numeric/func_name_dict.json")
    )
    return [
        target_from_record(r, served[r["dir"]], options.import_root)
        for r in sorted(records, key=lambda r: r["dir"])
    ]
