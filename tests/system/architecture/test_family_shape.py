"""Every built-in family has one shape: its role files under the same names, its records'
references into them or into shared code; the check names the expected file of a missing or
misnamed role (issue 41 item 4)."""

from __future__ import annotations

from pathlib import Path

from support.family_shape import ROLES, builtin_families, shape_problems
from support.layering import SRC as ROOT
from support.planted import planted_tree

from interp_harness.function_store.benchmark import Benchmark, load_ref


def test_every_builtin_family_has_the_shape() -> None:
    families = builtin_families()
    assert {"numeric", "strings", "entities_relations", "neurons", "ravel", "sae"} <= set(families)
    bad = [
        p
        for f, records in families.items()
        for p in shape_problems(ROOT, f, records, list(families))
    ]
    assert not bad, "family shape (docs/architecture.md, How to add a benchmark):\n" + "\n".join(
        bad
    )


def test_a_family_with_commands_declares_them_in_its_commands_module() -> None:
    seen = 0
    for folder, records in builtin_families().items():
        if not (ROOT / "function_store" / folder / ROLES["commands"].file).is_file():
            continue
        declared = load_ref(f"interp_harness.function_store.{folder}.commands:COMMANDS")
        for record in records:
            assert record.commands == declared, record.family
            seen += 1
    assert seen >= 3  # neurons, ravel, sae


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    return planted_tree(tmp_path, ("function_store", "evaluator"), files)


def _record(family: str, **refs: object) -> Benchmark:
    t, e = "interp_harness.function_store", "interp_harness.evaluator"
    fields: dict[str, object] = {
        "sources": {family: f"{t}.{family}.targets:load"},
        "runners": {family: f"{t}.{family}.runner"},
        "prompt": f"{t}.{family}.prompt:PROMPTS",
        "scorer": f"{e}.{family}.scorer:S",
    }
    return Benchmark(family=family, title=family, **{**fields, **refs})  # type: ignore[arg-type]


def test_the_check_names_the_expected_file(tmp_path: Path) -> None:
    good = {
        "function_store/beta/__init__.py": "",
        "function_store/beta/benchmark.py": "",
        "function_store/beta/targets.py": "",
        "function_store/beta/runner.py": "",
        "function_store/beta/prompt.py": "",
        "evaluator/beta/__init__.py": "",
        "evaluator/beta/scorer.py": "",
        "evaluator/beta/panel.py": "",
        "evaluator/shared/__init__.py": "",
        "evaluator/shared/panel.py": "",
    }
    root = _tree(
        tmp_path,
        {
            **good,
            "function_store/alpha/__init__.py": "",
            # the record imports its commands from a module that is not commands.py
            "function_store/alpha/benchmark.py": "from interp_harness.function_store.alpha.tools import COMMANDS\n",
            "function_store/alpha/tools.py": "COMMANDS = ()\n",
            "function_store/alpha/targets.py": "",
            "function_store/alpha/runners.py": "",  # misnamed runner, no runner.py
            "function_store/alpha/prompt.py": "",
            "evaluator/alpha/__init__.py": "S = 1\n",  # the scorer in the package, no scorer.py
        },
    )
    t, e = "interp_harness.function_store", "interp_harness.evaluator"
    alpha = _record(
        "alpha",
        runners={"a": f"{t}.alpha.runners"},
        scorer=f"{e}.alpha:S",
        panels=(f"{e}.beta.panel:P", f"{e}.shared.panel:P"),  # another family's; a shared one
    )
    folders = ["alpha", "beta"]
    assert shape_problems(root, "alpha", [alpha], folders) == sorted(
        [
            "alpha: no runner module (the runner(s) the record names): expected function_store/alpha/runner.py",
            "alpha: no scorer module (the Scorer the record names): expected evaluator/alpha/scorer.py",
            "function_store/alpha/runners.py: a misnamed runner module: expected function_store/alpha/runner.py",
            f"alpha: runner {t}.alpha.runners is in function_store/alpha/runners.py: expected function_store/alpha/runner.py",
            f"alpha: scorer {e}.alpha:S is in evaluator/alpha/__init__.py: expected evaluator/alpha/scorer.py",
            f"alpha: panel {e}.beta.panel:P is in family beta's folder; a record references its own family or shared code",
            "function_store/alpha/benchmark.py:1: the record imports interp_harness.function_store.alpha.tools; "
            "a family's commands live in function_store/alpha/commands.py",
        ]
    )
    # the same kinds of references, each in its role module or shared code: nothing to report
    beta = _record("beta", panels=(f"{e}.beta.panel:P", f"{e}.shared.panel:P"))
    assert shape_problems(root, "beta", [beta], folders) == []
