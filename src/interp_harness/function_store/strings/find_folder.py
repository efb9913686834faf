"""The string family in an original FIND dataset folder (`strings/fNNNNN/function_code.py`), and
the check that a folder's functions are the current release before they meet its unit tests."""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

from interp_harness.function_store.find_import import (
    SCRIPT,
    FolderKind,
    correct_pairs,
    sandboxed_outputs,
)
from interp_harness.sdk import PublicMeta

CATEGORY = "strings"  # FIND's folder name
RELEASE_TESTS = "find/strings/unit_test_data.json"  # the current release's, in the data registry
RELEASE_SAMPLE = 5  # string functions run per check; each is one subprocess with 10 inputs


def string_variant(code: str) -> str:
    return "composed" if "def function1" in code else "atomic"


def stale_strings_reason(
    root: Path, records: Sequence[dict], sample: int = RELEASE_SAMPLE
) -> str | None:
    """Why the string functions under `root/strings/` do not belong with these unit tests, or None.

    Up to `sample` functions spread over the folder run (in the harness's script sandbox, an argv
    list, no shell; in parallel) on the correct inputs of their own unit tests. Fewer than half of
    those tests reproducing means another release. Measured on the real folders: the current
    repository's f00000-f00003 reproduce 10 of 10 each (f00004, stochastic, 2 in one run); of the
    1000 old Zenodo functions 961 reproduce none of their 10, and all but 2 at most 3."""
    folder = Path(root) / CATEGORY
    present = [r for r in records if (folder / r["name"] / SCRIPT).is_file()]
    if not present:
        return None
    picked = present[:: max(1, len(present) // sample)][:sample]
    stamp = tuple((folder / r["name"] / SCRIPT).stat().st_mtime_ns for r in picked)
    key = json.dumps(picked, sort_keys=True)
    hits, total = _reproduced(str(folder), key, stamp)
    if 2 * hits >= total:
        return None
    names = ", ".join(r["name"] for r in picked)
    return (
        f"the string functions in {folder} do not match the unit tests they would be paired "
        f"with: only {hits} of the {total} unit tests of {names} reproduce, as with the Zenodo "
        "FIND-dataset.zip's OLD (June 2023) string set and the current (Sept 2023) tests."
    )


@lru_cache(maxsize=16)
def _reproduced(folder: str, picked_json: str, _stamp: tuple[int, ...]) -> tuple[int, int]:
    """(unit tests reproduced, unit tests run) for the picked records; cached per file state."""

    def run(record: dict) -> int:
        ins, want = correct_pairs(record)
        got = sandboxed_outputs(Path(folder) / record["name"] / SCRIPT, ins)
        return sum(o == w for o, w in zip(got, want, strict=True))

    picked = json.loads(picked_json)
    with ThreadPoolExecutor(max_workers=len(picked)) as pool:
        hits = sum(pool.map(run, picked))
    return hits, 10 * len(picked)


FOLDER = FolderKind(
    category=CATEGORY,
    variant=lambda folder, code, name_dict: string_variant(code),
    public=lambda variant: PublicMeta(input_kind="string", prompt_family="strings"),
    release_tests=RELEASE_TESTS,
    stale=stale_strings_reason,
)
