"""`harness sae build` / `list` (the record's typer app): the report table, the cache hit."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from interp_harness.evaluator.sae.cli import sae_app
from interp_harness.function_store.sae.catalog import load

FLAGS = ["--model", "llama-tiny-random", "--layer", "0", "--d-sae", "32", "--k", "2"]
FLAGS += ["--tokens", "400", "--steps", "5", "--n-latents", "2", "--device", "cpu"]


def test_build_then_cached_then_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "250")  # the table unwrapped
    runner = CliRunner()
    first = runner.invoke(sae_app, ["build", *FLAGS])
    assert first.exit_code == 0, first.output
    cat = load("llama-tiny-random-l0-topk")
    assert "SAE built" in first.output and "llama-tiny-random-l0-topk" in first.output
    assert f"{cat.report.fve:.3f}" in first.output and "blocks.0.hook_resid_post" in first.output
    again = runner.invoke(sae_app, ["build", *FLAGS])
    assert again.exit_code == 0 and "cached" in again.output
    listed = runner.invoke(sae_app, ["list"])
    assert listed.exit_code == 0 and "llama-tiny-random-l0-topk" in listed.output
    bad = runner.invoke(sae_app, ["build", *FLAGS, "--name", "../escape"])
    assert bad.exit_code == 1 and not (tmp_path / "escape").exists()


def test_list_nothing_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    out = CliRunner().invoke(sae_app, ["list"])
    assert out.exit_code == 0 and "harness sae build" in out.output
