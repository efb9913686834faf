"""An agent module that fails on import (not only one that is missing) is a clear error that names
the module, the exception and, for a syntax error, the line: never a raw traceback of the CLI."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from interp_harness.agents.registry import UnknownAgent, import_path
from interp_harness.harness.cli import app


@pytest.fixture
def broken_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "typo_agent.py").write_text('class A:\n    x = "unterminated\n')
    (tmp_path / "raising_agent.py").write_text('raise RuntimeError("no key configured")\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("typo_agent", "raising_agent"):
        sys.modules.pop(name, None)
    return tmp_path


def test_syntax_error_names_module_and_line(broken_modules: Path) -> None:
    with pytest.raises(UnknownAgent) as e:
        import_path("typo_agent:A")
    msg = str(e.value)
    assert "typo_agent" in msg and "SyntaxError" in msg and "line 2" in msg


def test_exception_at_import_is_named(broken_modules: Path) -> None:
    with pytest.raises(UnknownAgent, match="RuntimeError: no key configured"):
        import_path("raising_agent:A")


def test_cli_says_it_in_one_line(broken_modules: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(broken_modules)
    args = ["run", "--agent", "typo_agent:A", "--dataset", "find-gen", "--family", "numeric"]
    res = CliRunner().invoke(app, [*args, "-n", "1", "--agent-isolation", "none"])
    assert res.exit_code != 0
    out = res.output
    assert "SyntaxError" in out and "Traceback" not in out, out
