"""The one import package, `interp_harness`, over the repository's top-level folders.

The folders keep the names of the design's parts (harness, function_store, agents, evaluator,
model_services); each is installed under `interp_harness` with a name that says what it holds
(pyproject.toml's `[tool.interp_harness.parts]`), so the distribution adds exactly one top-level
import name. Everything else is in pyproject.toml.
"""

import tomllib
from pathlib import Path

from setuptools import find_namespace_packages, setup

CONFIG = tomllib.loads((Path(__file__).parent / "pyproject.toml").read_text())
PARTS = CONFIG["tool"]["interp_harness"]["parts"]


def subpackages(folder: str) -> list[str]:
    # namespace packages too: data folders (web templates, static files) have no __init__.py
    return find_namespace_packages(folder, exclude=["*__pycache__*"])


package_dir = {"interp_harness": "interp_harness"}
packages = ["interp_harness", *(f"interp_harness.{p}" for p in subpackages("interp_harness"))]
for name, folder in PARTS.items():
    package_dir[f"interp_harness.{name}"] = folder
    packages += [
        f"interp_harness.{name}",
        *(f"interp_harness.{name}.{p}" for p in subpackages(folder)),
    ]

setup(package_dir=package_dir, packages=packages)
