"""Issue 20 item 3: a FIND folder of the OLD (June 2023) release must not be paired with the
current (Sept 2023) unit tests. The Zenodo folder itself is not in the reference data, so these
tests build small folders shaped like the release in tmp dirs: FIND-format CLI scripts that
compute something else than the current functions (the old set's situation: 961 of 1000 old
functions reproduce none of their 10 current unit tests), run for real as subprocesses."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.find_scripts import FIND_STRINGS_MAIN

from interp_harness.function_store.catalog import Catalog, CatalogOptions
from interp_harness.function_store.datasets import DataUnavailable, data_path
from interp_harness.function_store.entities_relations.backbone_prompts import relation_template
from interp_harness.function_store.entities_relations.find_folder import stale_relations_reason
from interp_harness.function_store.find_import import set_script_sandbox
from interp_harness.function_store.runtime import call_target
from interp_harness.function_store.strings.find_folder import stale_strings_reason

# stands in for a function of the other release: never equal to a current expected output
OTHER = "import sys\n\n\ndef function(string):\n    return string[::-1] + '#'\n" + FIND_STRINGS_MAIN
# the current f00001 appends a fixed suffix; its 10 unit tests reproduce with it
CURRENT_F1 = (
    "import sys\n\n\ndef function(string):\n    return string + 'lvmBi'\n" + FIND_STRINGS_MAIN
)


def _units() -> list[dict]:
    return json.loads(data_path("find/strings/unit_test_data.json").read_text(encoding="utf-8"))


def _strings_folder(root: Path, scripts: dict[str, str]) -> Path:
    for name, code in scripts.items():
        (root / "strings" / name).mkdir(parents=True)
        (root / "strings" / name / "function_code.py").write_text(code)
    return root


def test_old_string_folder_is_detected(tmp_path):
    root = _strings_folder(tmp_path, {f"f0000{i}": OTHER for i in range(5)})
    reason = stale_strings_reason(root, _units())
    assert reason is not None and "only 0 of the 50 unit tests" in reason and "OLD" in reason


def test_current_string_function_passes_the_check(tmp_path):
    root = _strings_folder(tmp_path, {"f00001": CURRENT_F1})
    assert stale_strings_reason(root, _units()) is None


def test_find_v1_refuses_an_old_folder_and_points_to_find_import(tmp_path, monkeypatch):
    root = _strings_folder(tmp_path, {f"f0000{i}": OTHER for i in range(5)})
    monkeypatch.setenv("HARNESS_FIND_ROOT", str(root))
    targets = Catalog(CatalogOptions()).list(dataset="find-v1", family="strings")
    assert len(targets) == 1000
    t = targets[1]
    assert not t.available and t.hidden.code is None
    assert "only 0 of the 50 unit tests" in t.unavailable_reason
    assert "find-import" in t.unavailable_reason
    assert len(t.unit_tests) == 10  # the released tests are still listed, just not served


def test_find_import_refuses_old_strings_with_the_current_unit_tests(tmp_path):
    root = _strings_folder(tmp_path, {"f00000": OTHER, "f00001": OTHER})
    catalog = Catalog(CatalogOptions(import_root=root))
    # the folder's own files only (no unit tests): served as they are
    t = catalog.get("find-import/strings/f00001")
    assert t.available
    assert [o.output for o in call_target(t, ["ab"])] == ["ba#"]
    # the current release's unit_test_data.json copied into the old folder: refused
    shutil.copy(data_path("find/strings/unit_test_data.json"), root / "strings")
    t = Catalog(CatalogOptions(import_root=root)).get("find-import/strings/f00001")
    assert not t.available and "unit_test_data.json belongs to the other release" in (
        t.unavailable_reason or ""
    )


def _relation_script(instruction: str) -> str:
    # shaped like a FIND relation module: the prompt text sits in the script source
    return (
        "import sys\nmodel_url = {API_BASE}\n\n\ndef function(word):\n"
        f"    prompt = {instruction!r} + 'Input:' + word\n    return 'undefined'\n"
    )


def _relations_folder(root: Path, instruction: str, initial: list[str]) -> Path:
    folder = root / "neurons_relations" / "f00000"
    folder.mkdir(parents=True)
    (folder / "function_code.py").write_text(_relation_script(instruction))
    (folder / "initial.json").write_text(json.dumps(initial))
    shutil.copy(data_path("find/neurons_relations/unit_test_data.json"), folder.parent)
    return root


def _current_initial() -> list[str]:
    records = json.loads(data_path("find/neurons_relations/data.json").read_text("utf-8"))
    return records[0]["initial"]


def test_old_relation_wording_is_refused_with_current_unit_tests(tmp_path):
    old = _relations_folder(tmp_path / "old", "Answer with one word only.\n", ["Paris", "Peru"])
    reason = stale_relations_reason(old)
    assert reason is not None and "1 of 1 scripts lack the current prompt wording" in reason
    t = Catalog(CatalogOptions(import_root=old)).get("find-import/relations/f00000")
    assert not t.available and "OLD relation set" in (t.unavailable_reason or "")


def test_current_relation_wording_is_accepted(tmp_path):
    current_line = relation_template("x", "y").splitlines()[1]
    cur = _relations_folder(tmp_path / "cur", current_line + "\n", _current_initial())
    assert stale_relations_reason(cur) is None
    t = Catalog(CatalogOptions(import_root=cur)).get("find-import/relations/f00000")
    assert t.available


def test_without_a_script_sandbox_the_check_says_so(tmp_path):
    """function_store never runs a folder's scripts on the host: with no sandbox wired in, the
    release check refuses with a reason instead."""
    root = _strings_folder(tmp_path, {"f00007": OTHER})
    set_script_sandbox(None)
    with pytest.raises(DataUnavailable, match="without a sandbox: none is configured"):
        stale_strings_reason(root, _units())
