"""Generic code names no benchmark family (DESIGN §2 "Benchmarks are units"), checked with `ast`.

Generic code is `harness/**`, top-level `evaluator/*.py` and top-level `function_store/*.py`; the
family folders (`function_store/<family>/`, `evaluator/<family>/`, `agents/scripted_*`) may name
their family. A string literal is a family name when it equals a registry key (a family, or a
dataset in a record's `fixed_datasets`) or starts with `<fixed dataset>/` (a target id prefix such
as `neuron/`). Docstrings are prose and are not checked. The registry itself
(`function_store/benchmark.py`) is the one generic file allowed to name them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

from interp_harness.function_store.benchmark import GROUP, Benchmark

ALLOWED = frozenset({"function_store/benchmark.py"})


@dataclass(frozen=True)
class Keys:
    """The registry keys generic code must not spell out."""

    families: frozenset[str]
    fixed_datasets: frozenset[str]

    def names(self, text: str) -> bool:
        return (
            text in self.families
            or text in self.fixed_datasets
            or any(text.startswith(f"{d}/") for d in self.fixed_datasets)
        )


def keys_of(records: Iterable[Benchmark]) -> Keys:
    records = list(records)
    return Keys(
        frozenset(r.family for r in records),
        frozenset(d for r in records for d in r.fixed_datasets),
    )


def builtin_records() -> list[Benchmark]:
    """The records this repository ships (entry points into `interp_harness.function_store`), not plugins' or
    the ones a test registered in this process."""
    return [
        ep.load()
        for ep in entry_points(group=GROUP)
        if ep.value.startswith("interp_harness.function_store.")
    ]


def generic_files(root: Path) -> list[Path]:
    files = [*(root / "harness").rglob("*.py")]
    files += (root / "evaluator").glob("*.py")
    files += (root / "function_store").glob("*.py")
    return sorted(p for p in files if p.relative_to(root).as_posix() not in ALLOWED)


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the Constant nodes that are docstrings."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def family_literals(root: Path, keys: Keys) -> list[tuple[str, int, str]]:
    """(file, line, literal) for every family name spelled out in generic code under `root`."""
    found: list[tuple[str, int, str]] = []
    for path in generic_files(root):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        skip = _docstrings(tree)
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in skip
                and keys.names(node.value)
            ):
                found.append((rel, node.lineno, node.value))
    return sorted(found)
