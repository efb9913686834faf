"""find-v1 strings: the released FIND string benchmark (its unit tests and test data).

The release ships the 1000 string functions' unit tests (`unit_test_data.json`) and LM-written
descriptions / test inputs (`test_data.json`), but not the functions. Targets therefore carry their
unit tests and are unavailable to call unless an original FIND dataset folder is configured
(HARNESS_FIND_ROOT or `CatalogOptions.import_root`, holding `strings/fNNNNN/function_code.py`); then
each is served by running its own script (runner "script", `interp_harness.function_store.find_import`).
"""

from __future__ import annotations

import json

from interp_harness.function_store.catalog import CatalogOptions
from interp_harness.function_store.datasets import data_path
from interp_harness.function_store.find_import import (
    USE_FIND_IMPORT,
    find_root,
    script_hidden,
    unit_tests_from,
)
from interp_harness.function_store.strings.find_folder import stale_strings_reason, string_variant
from interp_harness.sdk import HiddenTruth, PublicMeta, Target, make_canary

UNAVAILABLE = (
    "the FIND string functions are not in the released metadata (only their unit tests and "
    "LM-written descriptions are). To call them, set HARNESS_FIND_ROOT to an original FIND dataset "
    "folder holding strings/fNNNNN/function_code.py of the current (Sept 2023) set. Beware: the "
    "known copy of the Zenodo FIND-dataset.zip holds the OLD (June 2023) string set, which does "
    "not match these unit tests; serve that one as dataset find-import instead."
)


def _description(raw: str) -> str:
    """test_data descriptions start with ': ' and end with blank lines ("\n\n")."""
    return raw.removeprefix(": ").strip()


def load(options: CatalogOptions) -> list[Target]:
    """The 1000 released string functions' unit tests, served from a FIND folder if configured."""
    units = json.loads(data_path("find/strings/unit_test_data.json").read_text(encoding="utf-8"))
    texts = {
        r["name"]: r
        for r in json.loads(data_path("find/strings/test_data.json").read_text(encoding="utf-8"))
    }
    root = find_root(options)
    # a folder of the other (old Zenodo) release must not be paired with these unit tests
    stale = stale_strings_reason(root, units) if root else None
    targets = []
    for record in units:
        name = record["name"]
        tid = f"find-v1/strings/{name}"
        desc = _description(texts.get(name, {}).get("description", ""))
        script = root / "strings" / name / "function_code.py" if root else None
        if script is not None and script.is_file() and not stale:
            hidden = script_hidden(script, tid, desc)
            variant, reason = string_variant(hidden.code or ""), None
        else:
            hidden = HiddenTruth(runner="script", description=desc, canary=make_canary(tid))
            variant = "unknown"
            reason = stale + USE_FIND_IMPORT if stale else UNAVAILABLE
        targets.append(
            Target(
                id=tid,
                dataset="find-v1",
                family="strings",
                variant=variant,
                public=PublicMeta(input_kind="string", prompt_family="strings"),
                hidden=hidden,
                unit_tests=unit_tests_from(record),
                unavailable_reason=reason,
            )
        )
    return targets
