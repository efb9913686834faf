"""Entities and relations in an original FIND dataset folder (`neurons_entities/`,
`neurons_relations/`), and the check that a folder's relation modules are the current release."""

from __future__ import annotations

import json
from pathlib import Path

from interp_harness.function_store.datasets import DataUnavailable, data_path
from interp_harness.function_store.entities_relations.backbone_prompts import relation_template
from interp_harness.function_store.find_import import SCRIPT, FolderKind, read_json
from interp_harness.sdk import PublicMeta

ENTITIES_CATEGORY = "neurons_entities"  # FIND's folder names
RELATIONS_CATEGORY = "neurons_relations"


def _current_relation_initials() -> dict[str, object]:
    try:
        records = json.loads(data_path("find/neurons_relations/data.json").read_text("utf-8"))
    except (DataUnavailable, OSError, ValueError):
        return {}
    return {Path(r["dir"]).name: r.get("initial") for r in records}


def stale_relations_reason(root: Path) -> str | None:
    """Why the relation modules under `root/neurons_relations/` are not the current release, or
    None. A script without the current prompt's instruction line has the old wording; an
    `initial.json` unlike the released data.json's list is an old exemplar list."""
    folders = sorted((Path(root) / RELATIONS_CATEGORY).glob("f[0-9][0-9][0-9][0-9][0-9]"))
    scripts = [f / SCRIPT for f in folders if (f / SCRIPT).is_file()]
    if not scripts:
        return None
    line = relation_template("x", "y").splitlines()[1]  # the current instruction line
    old_wording = [p for p in scripts if line not in p.read_text("utf-8", "replace")]
    current = _current_relation_initials()
    old_initial = [
        f
        for f in folders
        if f.name in current
        and (f / "initial.json").is_file()
        and read_json(f / "initial.json") != current[f.name]
    ]
    if not old_wording and not old_initial:
        return None
    return (
        f"the relation modules in {Path(root) / RELATIONS_CATEGORY} are not the current "
        f"release: {len(old_wording)} of {len(scripts)} scripts lack the current prompt wording "
        f"and {len(old_initial)} initial.json lists differ from the released data.json, as in "
        "the Zenodo FIND-dataset.zip's OLD relation set."
    )


ENTITIES = FolderKind(
    category=ENTITIES_CATEGORY,
    variant=lambda folder, code, name_dict: "composed" if "concept2" in code else "atomic",
    public=lambda variant: PublicMeta(input_kind="word", prompt_family=ENTITIES_CATEGORY),
)
RELATIONS = FolderKind(
    category=RELATIONS_CATEGORY,
    variant=lambda folder, code, name_dict: "corrupted" if "ex = " in code else "clean",
    public=lambda variant: PublicMeta(input_kind="word", prompt_family=RELATIONS_CATEGORY),
    release_tests=f"find/{RELATIONS_CATEGORY}/unit_test_data.json",
    stale=lambda root, records: stale_relations_reason(root),
)
