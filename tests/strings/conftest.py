"""FIND folder release checks run their scripts in the sandbox the harness wires in
(interp_harness.function_store.find_import.set_script_sandbox); these tests wire it as the harness does."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from interp_harness.function_store.find_import import set_script_sandbox
from interp_harness.harness.sandbox.find_scripts import install_script_sandbox


@pytest.fixture(autouse=True)
def script_sandbox() -> Iterator[None]:
    install_script_sandbox()
    yield
    set_script_sandbox(None)
