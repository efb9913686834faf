"""Fixtures for the agent-host tests: bubblewrap required (a skip says so), this folder and the
orchestrator tests' plugin on the import path (their agents load by dotted path)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))  # host_test_agents
sys.path.insert(0, str(ROOT / "tests" / "orchestrator"))  # orch_plugin (orch-test targets)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if shutil.which("bwrap") is None:
        skip = pytest.mark.skip(reason="bubblewrap is not installed (Debian package `bubblewrap`)")
        for item in items:
            if "tests/agent_host/" in str(item.fspath):
                item.add_marker(skip)
