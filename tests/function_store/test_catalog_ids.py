"""Catalog ids and error messages (independent of any one source)."""

from __future__ import annotations

import subprocess

import pytest
from support import HARNESS_CLI

from interp_harness.function_store.catalog import Catalog, UnknownDataset, UnknownTarget, parse_id


def test_parse_ids():
    assert parse_id("find-v1/numeric/f00473") == ("find-v1", "numeric", None)
    assert parse_id("find-gen/strings/s0/f00012") == ("find-gen", "strings", 0)
    assert parse_id("find-gen/relations/s17/f00003") == ("find-gen", "relations", 17)


@pytest.mark.parametrize(
    "bad", ["f00473", "find-v1/colors/f1", "find-gen/strings/x0/f1", "nope/numeric/f00001"]
)
def test_unknown_ids_say_how_to_list(bad):
    with pytest.raises(UnknownTarget) as e:
        Catalog().get(bad)
    assert "harness targets list" in str(e.value)


def test_unknown_dataset_and_family():
    with pytest.raises(UnknownDataset, match="known"):
        Catalog().list(dataset="find-v9")
    with pytest.raises(ValueError, match="unknown family"):
        Catalog().list(family="colors")


def test_cli_unknown_target_exit_code_and_message():
    r = subprocess.run(
        [*HARNESS_CLI, "targets", "call", "find-v1/numeric/f99999", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode != 0
    assert "harness targets list" in (r.stderr + r.stdout)
