"""The layering rule of DESIGN §2 holds on the tree, and the checker catches a violation."""

from __future__ import annotations

from pathlib import Path

from support.layering import (
    DYNAMIC_IMPORTS,
    PARTS,
    REPO,
    SRC,
    check_tree,
    cycles,
    dynamic_import_sites,
    folder_name_imports,
    orchestrator_edges,
)
from support.planted import planted_tree


def test_tree_follows_the_layers() -> None:
    bad = check_tree(SRC)
    assert not bad, "import rule violations (DESIGN §2 Layers):\n" + "\n".join(map(str, bad))


def test_no_code_imports_a_folder_name_as_a_package() -> None:
    bad = folder_name_imports(REPO)
    assert not bad, "import these as interp_harness.<part>:\n" + "\n".join(bad)


def test_folder_name_imports_are_found(tmp_path: Path) -> None:
    files = {
        "tests/t.py": "import harness.cli\nfrom interp_harness import sdk\n",
        "benchmarks/b.py": "from function_store.models import Target\nimport agents\n",
        "scripts/s.py": "from . import evaluator\n",  # relative: the scripts folder's own
        "src/interp_harness/harness/x.py": "from ..agents import base\nimport model_services\n",
    }
    assert sorted(folder_name_imports(planted_tree(tmp_path, (), files))) == [
        "benchmarks/b.py:1 function_store.models",
        "benchmarks/b.py:2 agents",
        "src/interp_harness/harness/x.py:2 model_services",
        "tests/t.py:1 harness.cli",
    ]


def test_the_orchestrator_parts_import_each_other_without_a_cycle() -> None:
    edges = orchestrator_edges(SRC)
    assert {"runs", "store", "domain", "episode", "executors"} <= set(edges)
    assert not cycles(edges), f"import cycles between harness's parts: {cycles(edges)}"


def test_a_cycle_between_orchestrator_parts_is_found(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "harness/runs/scheduler.py": "from interp_harness.harness.executors import local\n",
            "harness/executors/local.py": "from interp_harness.harness.runs.plan import x\n",
            "harness/runs/plan.py": "from interp_harness.harness import store\n",
            "harness/store.py": "import json\n",
            "harness/web/a.py": "from interp_harness.harness.api import schemas\n",
            "harness/api/schemas.py": "from interp_harness.harness.web import a\n",
        },
    )
    edges = orchestrator_edges(root)
    assert edges["runs"] == {"executors", "store"}
    assert cycles(edges) == [["api", "web"], ["executors", "runs"]]


def test_dynamic_import_allow_list_is_current() -> None:
    stale = set(DYNAMIC_IMPORTS) - dynamic_import_sites(SRC)
    assert not stale, f"allow-listed dynamic imports that no longer exist: {sorted(stale)}"


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    return planted_tree(tmp_path, PARTS, files)


def test_checker_reports_violations(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "function_store/bad.py": """\
                from __future__ import annotations

                from typing import TYPE_CHECKING

                from interp_harness.harness.sandbox import get_sandbox
                from .helpers import _secret, __version__

                if TYPE_CHECKING:
                    from interp_harness.evaluator.scoring import Scorer


                def run():
                    import importlib

                    import interp_harness.harness.cli

                    return importlib.import_module(f"interp_harness.harness.commands.{run}")
                """,
            "function_store/helpers.py": "_secret = 1\n__version__ = '1'\n",
            "function_store/sub/__init__.py": "from .. import _helpers\n",
            "agents/leaf.py": """\
                import interp_harness.function_store.models


                class A:
                    def f(self):
                        return __import__("json")
                """,
            "evaluator/up.py": "from interp_harness.harness import settings\nimport interp_harness.function_store.models\n",
            # the folder's name as a top-level package: not installed, and `agents` is another
            # project's package (the OpenAI Agents SDK)
            "function_store/old.py": "from harness.cli import main\nimport agents\n",
            # what the rule allows: harness imports every layer, same-package imports
            "harness/top.py": """\
                from interp_harness.agents import leaf
                from interp_harness.evaluator import up
                from interp_harness.function_store.helpers import __version__
                from . import top2
                """,
            "harness/top2.py": "",
        },
    )
    got = {(v.path, v.line, v.kind, v.target) for v in check_tree(root, dynamic_allowed={})}
    assert got == {
        ("function_store/bad.py", 5, "layer", "interp_harness.harness.sandbox"),
        ("function_store/bad.py", 6, "private", "interp_harness.function_store.helpers"),
        ("function_store/bad.py", 9, "layer", "interp_harness.evaluator.scoring"),
        ("function_store/bad.py", 15, "layer", "interp_harness.harness.cli"),
        ("function_store/bad.py", 17, "dynamic", ""),
        ("function_store/bad.py", 17, "layer", "interp_harness.harness.commands"),
        ("function_store/sub/__init__.py", 1, "private", "interp_harness.function_store"),
        ("function_store/old.py", 1, "namespace", "harness.cli"),
        ("function_store/old.py", 2, "namespace", "agents"),
        ("agents/leaf.py", 1, "layer", "interp_harness.function_store.models"),
        ("agents/leaf.py", 6, "dynamic", ""),
        ("evaluator/up.py", 1, "layer", "interp_harness.harness"),
    }
    # an allow-listed dynamic import is not reported; its constant module is still checked
    allowed = {("function_store/bad.py", "run"): "test", ("agents/leaf.py", "f"): "test"}
    kinds = {(v.path, v.kind) for v in check_tree(root, dynamic_allowed=allowed)}
    assert ("function_store/bad.py", "dynamic") not in kinds
    assert ("agents/leaf.py", "dynamic") not in kinds
    assert ("function_store/bad.py", "layer") in kinds


def test_checker_reports_a_family_importing_another(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "function_store/sae/runner.py": """\
                from interp_harness.function_store.neurons.runner import NeuronRunner
                from interp_harness.function_store.sae import catalog
                from interp_harness.function_store.token_activations.runner import ActivationRunner
                """,
            "evaluator/sae/scorer.py": """\
                from interp_harness.evaluator.neurons.membership import LexicalMembership
                from interp_harness.evaluator import neurons


                def f():
                    from interp_harness.function_store.neurons import data
                    from interp_harness.function_store.sae.catalog import load
                    from interp_harness.evaluator.token_activations.testset import TokenActs
                """,
            "evaluator/neurons/cli.py": "import interp_harness.function_store.ravel.instances\n",
            # shared code sits below the families: it imports none of them
            "evaluator/token_activations/panel.py": (
                "from interp_harness.function_store.neurons.runner import UNAVAILABLE\n"
            ),
            "function_store/catalog.py": "from interp_harness.function_store.numeric import targets\n",
            # the composition root wires families together
            "harness/wire.py": "from interp_harness.evaluator.neurons import cli\n",
        },
    )
    found = [v for v in check_tree(root, dynamic_allowed={}) if v.kind == "family"]
    assert {(v.path, v.line, v.target) for v in found} == {
        ("function_store/sae/runner.py", 1, "interp_harness.function_store.neurons.runner"),
        ("evaluator/sae/scorer.py", 1, "interp_harness.evaluator.neurons.membership"),
        ("evaluator/sae/scorer.py", 2, "interp_harness.evaluator.neurons"),
        ("evaluator/sae/scorer.py", 6, "interp_harness.function_store.neurons"),
        ("evaluator/neurons/cli.py", 1, "interp_harness.function_store.ravel.instances"),
        ("evaluator/token_activations/panel.py", 1, "interp_harness.function_store.neurons.runner"),
        ("function_store/catalog.py", 1, "interp_harness.function_store.numeric"),
    }
    messages = {v.path: v.message for v in found}
    assert messages["function_store/sae/runner.py"].startswith(
        "family sae imports interp_harness.function_store.neurons.runner of family neurons"
    )
    assert messages["function_store/catalog.py"].startswith(
        "shared code imports interp_harness.function_store.numeric of family numeric"
    )


def test_an_sdk_name_is_an_edge_to_the_layer_that_defines_it(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "sdk/__init__.py": """\
                _WHERE: dict[str, str] = {
                    "Target": "interp_harness.function_store.models",
                    "Scorer": "interp_harness.evaluator.scorer",
                    "Agent": "interp_harness.agents.base",
                }
                """,
            "function_store/fam/runner.py": """\
                from interp_harness.sdk import Agent, Target
                from interp_harness.sdk import Scorer
                from interp_harness.sdk import Catalog
                import interp_harness.sdk
                from interp_harness import sdk
                from interp_harness import harness
                from interp_harness.sdk import _WHERE
                """,
            # what the rule allows: each name's own layer is below the importer
            "evaluator/fam/scorer.py": "from interp_harness.sdk import Scorer, Target\n",
            "harness/wire.py": "from interp_harness.sdk import Agent, Scorer, Target\n",
            "agents/a.py": "from interp_harness.sdk import Agent, Target\n",
        },
    )
    found = check_tree(root, dynamic_allowed={}, families=("fam",))
    assert {(v.path, v.line, v.kind, v.target) for v in found} == {
        ("function_store/fam/runner.py", 2, "layer", "interp_harness.evaluator.scorer"),
        ("function_store/fam/runner.py", 3, "layer", "interp_harness.sdk"),
        ("function_store/fam/runner.py", 4, "layer", "interp_harness.sdk"),
        ("function_store/fam/runner.py", 5, "layer", "interp_harness.sdk"),
        ("function_store/fam/runner.py", 6, "layer", "interp_harness.harness"),
        ("function_store/fam/runner.py", 7, "layer", "interp_harness.sdk"),
        ("function_store/fam/runner.py", 7, "private", "interp_harness.sdk"),
        ("agents/a.py", 1, "layer", "interp_harness.function_store.models"),
    }
    messages = {(v.line, v.kind): v.message for v in found if v.path.startswith("function_")}
    assert messages[2, "layer"] == (
        "function_store imports interp_harness.evaluator.scorer (import of Scorer through the SDK)"
    )
    assert "Catalog, not an SDK name" in messages[3, "layer"]
    assert "import its names (`from interp_harness.sdk import X`)" in messages[4, "layer"]
