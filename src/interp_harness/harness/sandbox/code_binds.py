"""The parts of our one import package that a sandbox may import, and the binds that show them.

Inside a sandbox `PYTHONPATH` starts with CODE_ROOT, where `interp_harness` holds its own
(import-free) `__init__.py` and only the parts named: each bound read-only from wherever this
process imports it (an editable checkout's folder, or site-packages for a wheel). A part not
named is absent from the package's `__path__`, so it cannot be imported from there."""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Iterable

import interp_harness

CODE_ROOT = "/opt/interp-harness"
PACKAGE = "interp_harness"


@functools.cache  # asked at every sandbox start; where a part is installed does not change
def part_dir(part: str) -> str:
    """The folder this process imports `interp_harness.<part>` from (found, not imported)."""
    spec = importlib.util.find_spec(f"{PACKAGE}.{part}")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"{PACKAGE}.{part} is not an installed part")
    return os.path.realpath(spec.submodule_search_locations[0])


def part_binds(parts: Iterable[str]) -> list[str]:
    """bwrap options binding the package's `__init__.py` and each of `parts` under CODE_ROOT."""
    init = os.path.realpath(interp_harness.__file__ or "")
    args = ["--ro-bind", init, f"{CODE_ROOT}/{PACKAGE}/__init__.py"]
    for part in parts:
        args += ["--ro-bind", part_dir(part), f"{CODE_ROOT}/{PACKAGE}/{part}"]
    return args
