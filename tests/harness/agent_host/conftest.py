"""Fixtures for the agent-host tests: bubblewrap required (a skip says so). This folder and the
run tests' plugin are on the import path (tests/conftest.py): their agents load by dotted path."""

from __future__ import annotations

import shutil

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if shutil.which("bwrap") is None:
        skip = pytest.mark.skip(reason="bubblewrap is not installed (Debian package `bubblewrap`)")
        for item in items:
            if "tests/harness/agent_host/" in str(item.fspath):
                item.add_marker(skip)
