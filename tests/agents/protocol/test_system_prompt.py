"""Issue 20 item 7: find-compat episodes get FIND's system prompt verbatim, loaded from the data
directory (`find/prompts/interpreter/system.txt`, the reference copy in ../shared/data); default
mode keeps the project's own wording."""

from __future__ import annotations

import logging

from interp_harness.function_store.datasets import data_path
from interp_harness.harness.episode import prompts


def test_find_compat_uses_finds_text_from_the_data_directory(monkeypatch):
    monkeypatch.delenv("HARNESS_SYSTEM_PROMPT_FILE", raising=False)
    text, source = prompts.system_prompt_source("find-compat")
    reference = data_path("find/prompts/interpreter/system.txt").read_text(encoding="utf-8")
    assert source == "find" and text == reference
    assert prompts.system_prompt("find-compat") == reference
    assert "commmand" in text  # FIND's misspelling, kept verbatim


def test_default_mode_keeps_the_projects_wording(monkeypatch):
    monkeypatch.delenv("HARNESS_SYSTEM_PROMPT_FILE", raising=False)
    assert prompts.system_prompt_source() == (prompts.SYSTEM_PROMPT, "own")
    assert prompts.system_prompt("default") == prompts.SYSTEM_PROMPT


def test_missing_file_falls_back_with_a_warning(tmp_path, monkeypatch, caplog):
    monkeypatch.delenv("HARNESS_SYSTEM_PROMPT_FILE", raising=False)
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path))
    with caplog.at_level(logging.WARNING, logger="interp_harness.harness.episode.prompts"):
        assert prompts.system_prompt_source("find-compat") == (prompts.SYSTEM_PROMPT, "own")
    assert "harness data fetch find" in caplog.text


def test_operator_file_overrides_both_modes(tmp_path, monkeypatch):
    f = tmp_path / "sys.txt"
    f.write_text("operator's system prompt", encoding="utf-8")
    monkeypatch.setenv("HARNESS_SYSTEM_PROMPT_FILE", str(f))
    for mode in ("default", "find-compat"):
        assert prompts.system_prompt_source(mode) == ("operator's system prompt", "file")
