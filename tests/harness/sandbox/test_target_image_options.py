"""HARNESS_TARGET_IMAGE / HARNESS_TARGET_IMAGE_WHEELS are refused when they cannot mean what the
operator wrote, before any engine is asked (no engine is needed for these)."""

from __future__ import annotations

from pathlib import Path

import pytest

from interp_harness.harness.sandbox.docker_engine import (
    EngineUnavailable,
    target_sandbox_options,
)
from interp_harness.harness.settings import Settings


def test_the_wheels_setting_is_a_comma_separated_list_of_paths(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HARNESS_TARGET_IMAGE_WHEELS", "/w/a-1-py3-none-any.whl, /w/b.whl")
    assert Settings().target_image_wheel_paths == [
        Path("/w/a-1-py3-none-any.whl"),
        Path("/w/b.whl"),
    ]
    monkeypatch.delenv("HARNESS_TARGET_IMAGE_WHEELS")
    assert Settings().target_image_wheel_paths == []


@pytest.mark.parametrize("name", ["missing-1-py3-none-any.whl", "plugin.tar.gz"])
def test_a_path_that_is_not_a_wheel_file_is_refused(tmp_path: Path, name: str) -> None:
    (tmp_path / "plugin.tar.gz").write_bytes(b"not a wheel")
    with pytest.raises(EngineUnavailable, match="HARNESS_TARGET_IMAGE_WHEELS.*" + name):
        target_sandbox_options(None, [tmp_path / name])


def test_wheels_with_an_image_of_the_operators_own_are_refused(tmp_path: Path) -> None:
    wheel = tmp_path / "p-1-py3-none-any.whl"
    wheel.write_bytes(b"PK")
    with pytest.raises(EngineUnavailable, match="with HARNESS_TARGET_IMAGE set"):
        target_sandbox_options("registry.local/target:1", [wheel])
