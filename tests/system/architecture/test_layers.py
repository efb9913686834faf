"""The layering rule of DESIGN §2 holds on the tree, and the checker catches a violation."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.system.architecture.layering import (
    DYNAMIC_IMPORTS,
    PACKAGES,
    check_tree,
    dynamic_import_sites,
)

ROOT = Path(__file__).resolve().parents[3]


def test_tree_follows_the_layers() -> None:
    bad = check_tree(ROOT)
    assert not bad, "import rule violations (DESIGN §2 Layers):\n" + "\n".join(map(str, bad))


def test_dynamic_import_allow_list_is_current() -> None:
    stale = set(DYNAMIC_IMPORTS) - dynamic_import_sites(ROOT)
    assert not stale, f"allow-listed dynamic imports that no longer exist: {sorted(stale)}"


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for pkg in PACKAGES:
        (tmp_path / pkg).mkdir(exist_ok=True)
        (tmp_path / pkg / "__init__.py").touch()
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def test_checker_reports_violations(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "function_store/bad.py": """\
                from __future__ import annotations

                from typing import TYPE_CHECKING

                from harness.sandbox import get_sandbox
                from .helpers import _secret, __version__

                if TYPE_CHECKING:
                    from evaluator.scoring import Scorer


                def run():
                    import importlib

                    import harness.cli

                    return importlib.import_module(f"harness.commands.{run}")
                """,
            "function_store/helpers.py": "_secret = 1\n__version__ = '1'\n",
            "function_store/sub/__init__.py": "from .. import _helpers\n",
            "agents/leaf.py": """\
                import function_store.models


                class A:
                    def f(self):
                        return __import__("json")
                """,
            "evaluator/up.py": "from harness import settings\nimport function_store.models\n",
            # what the rule allows: harness imports every layer, same-package imports
            "harness/top.py": """\
                from agents import leaf
                from evaluator import up
                from function_store.helpers import __version__
                from . import top2
                """,
            "harness/top2.py": "",
        },
    )
    got = {(v.path, v.line, v.kind, v.target) for v in check_tree(root, dynamic_allowed={})}
    assert got == {
        ("function_store/bad.py", 5, "layer", "harness.sandbox"),
        ("function_store/bad.py", 6, "private", "function_store.helpers"),
        ("function_store/bad.py", 9, "layer", "evaluator.scoring"),
        ("function_store/bad.py", 15, "layer", "harness.cli"),
        ("function_store/bad.py", 17, "dynamic", ""),
        ("function_store/bad.py", 17, "layer", "harness.commands"),
        ("function_store/sub/__init__.py", 1, "private", "function_store"),
        ("agents/leaf.py", 1, "layer", "function_store.models"),
        ("agents/leaf.py", 6, "dynamic", ""),
        ("evaluator/up.py", 1, "layer", "harness"),
    }
    # an allow-listed dynamic import is not reported; its constant module is still checked
    allowed = {("function_store/bad.py", "run"): "test", ("agents/leaf.py", "f"): "test"}
    kinds = {(v.path, v.kind) for v in check_tree(root, dynamic_allowed=allowed)}
    assert ("function_store/bad.py", "dynamic") not in kinds
    assert ("agents/leaf.py", "dynamic") not in kinds
    assert ("function_store/bad.py", "layer") in kinds
