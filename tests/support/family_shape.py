"""One shape per benchmark family: the same file names for the same roles, checked on the tree.

A built-in family is a folder `function_store/<folder>/` holding a record (an entry point of
`interp_harness.benchmarks` into `interp_harness.function_store.<folder>.benchmark`) and its evaluator side
`evaluator/<folder>/`. Each role has one file name in every family (`ROLES`); a record's
references point into its own family's role module for that kind, or into shared code (a module
of `function_store/` or `evaluator/` outside every family folder). `shape_problems` reads files
and reference strings only, imports nothing, so a planted tree can be checked as the real one.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

from interp_harness.function_store.benchmark import GROUP, Benchmark
from support.layering import PARTS, ROOT_PACKAGE
from support.record_refs import references


@dataclass(frozen=True)
class Role:
    side: str  # the layer folder: "function_store" or "evaluator"
    file: str  # its file name in every family folder
    required: bool  # every family has one (else: only a family that has the role)
    what: str  # in messages


ROLES: Mapping[str, Role] = {
    "record": Role("function_store", "benchmark.py", True, "the Benchmark record"),
    "targets": Role("function_store", "targets.py", True, "the sources the record names"),
    "runner": Role("function_store", "runner.py", True, "the runner(s) the record names"),
    "prompt": Role("function_store", "prompt.py", True, "the task prompts"),
    "commands": Role("function_store", "commands.py", False, "the family's own commands"),
    "data": Role("function_store", "data.py", False, "the family's own reference data"),
    "scorer": Role("evaluator", "scorer.py", True, "the Scorer the record names"),
    "panel": Role("evaluator", "panel.py", False, "the family's own episode panels"),
    "cli": Role("evaluator", "cli.py", False, "the family's `harness <name>` subcommands"),
}

# record_refs.references' kind -> the role module a reference of that kind lives in
KIND_ROLE: Mapping[str, str] = {
    "source": "targets",
    "runner": "runner",
    "reference_data": "data",
    "prompt": "prompt",
    "scorer": "scorer",
    "panel": "panel",
    "cli": "cli",
}

# names the roles have had (issue 41): such a file in a family folder is a misnamed role
ALIASES: Mapping[tuple[str, str], str] = {
    ("function_store", "runners.py"): "runner",
    ("function_store", "sources.py"): "targets",
    ("function_store", "source.py"): "targets",
    ("function_store", "prompts.py"): "prompt",
    ("function_store", "task_prompts.py"): "prompt",
    ("function_store", "command.py"): "commands",
    ("function_store", "record.py"): "record",
    ("evaluator", "scoring.py"): "scorer",
    ("evaluator", "scorers.py"): "scorer",
    ("evaluator", "agent_task.py"): "scorer",
    ("evaluator", "panels.py"): "panel",
}


def builtin_families() -> dict[str, list[Benchmark]]:
    """folder -> the records this repository ships from it (entry points into
    `interp_harness.function_store.<folder>.benchmark`)."""
    prefix = f"{ROOT_PACKAGE}.function_store."
    out: dict[str, list[Benchmark]] = {}
    for ep in entry_points(group=GROUP):
        if ep.value.startswith(prefix):
            out.setdefault(ep.value[len(prefix) :].split(".")[0], []).append(ep.load())
    return out


def module_file(root: Path, module: str) -> Path | None:
    """The file of one of our modules (`interp_harness.function_store.numeric.runner` ->
    `function_store/numeric/runner.py` under `root`, the package's folder), whether or not it
    exists; None when not ours or not in a part."""
    names = module.split(".")
    if names[0] != ROOT_PACKAGE or len(names) < 2 or names[1] not in PARTS:
        return None
    base = root
    for name in names[1:]:
        base = base / name
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def family_of(root: Path, path: Path, folders: Sequence[str]) -> str | None:
    """The family folder a file sits in (`function_store/<f>/...` or `evaluator/<f>/...`)."""
    parts = path.relative_to(root).parts
    if len(parts) >= 3 and parts[0] in ("function_store", "evaluator") and parts[1] in folders:
        return parts[1]
    return None


def _role_path(root: Path, folder: str, role: str) -> Path:
    r = ROLES[role]
    return root / r.side / folder / r.file


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def shape_problems(
    root: Path, folder: str, records: Sequence[Benchmark], folders: Sequence[str]
) -> list[str]:
    """What is wrong with the shape of one family folder (empty when it has its role files under
    their names and its records reference only them or shared code)."""
    out: list[str] = []
    for role, r in ROLES.items():
        path = _role_path(root, folder, role)
        if r.required and not path.is_file():
            out.append(f"{folder}: no {role} module ({r.what}): expected {_rel(root, path)}")
    for side in ("function_store", "evaluator"):
        for path in sorted((root / side / folder).glob("*.py")):
            role = ALIASES.get((side, path.name))
            if role is not None:
                expected = _rel(root, _role_path(root, folder, role))
                out.append(f"{_rel(root, path)}: a misnamed {role} module: expected {expected}")
    for record in records:
        for kind, ref in references(record):
            out += _reference_problem(root, folder, record.family, kind, ref, folders)
    out += _record_imports(root, folder)
    return sorted(set(out))


def _reference_problem(
    root: Path, folder: str, family: str, kind: str, ref: str, folders: Sequence[str]
) -> list[str]:
    module = ref.partition(":")[0]
    path = module_file(root, module)
    if path is None:
        return []  # not ours (a plugin's or a library's): not this check's business
    owner = family_of(root, path, folders)
    if owner is None:
        return []  # shared code (generic, or a shared folder such as token_activations/)
    role = KIND_ROLE[kind]
    expected = _role_path(root, owner, role)
    if owner != folder:
        return [
            f"{family}: {kind} {ref} is in family {owner}'s folder; a record references its own family or shared code"
        ]
    if path != expected:
        return [f"{family}: {kind} {ref} is in {_rel(root, path)}: expected {_rel(root, expected)}"]
    return []


def _record_imports(root: Path, folder: str) -> list[str]:
    """The record module imports, from its own family, only role modules (its `commands.py`):
    commands declared elsewhere in the family are a misnamed commands module."""
    path = _role_path(root, folder, "record")
    if not path.is_file():
        return []
    own = f"{ROOT_PACKAGE}.function_store.{folder}"
    role_modules = {
        r.file.removesuffix(".py") for r in ROLES.values() if r.side == "function_store"
    }
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(own + "."):
            name = node.module[len(own) + 1 :].split(".")[0]
            if name not in role_modules:
                out.append(
                    f"{_rel(root, path)}:{node.lineno}: the record imports {node.module}; "
                    f"a family's commands live in {_rel(root, _role_path(root, folder, 'commands'))}"
                )
    return out
