"""The import rules of DESIGN §2 ("Layers"), checked on source text with `ast`.

`check_tree(root)` reads every `.py` file under `root` (`src/interp_harness`, or a planted copy):
module-level and function-level imports, `TYPE_CHECKING` blocks included, relative imports
resolved, and returns one `Violation` per offending import. A layer is a folder of the package
and its import name (`src/interp_harness/harness/` is `interp_harness.harness`); everything else
in the package (`__init__.py`, `_registry.py`, `sdk/`) is the root package's layer.

- an import of a part's folder name as a top-level package (`import harness`): there is no such
  package, only `interp_harness.<part>` (and `agents` is another project's);
- a layer edge against the rule (`agents` imports nothing of ours; `function_store` no `harness`
  or `evaluator`; `evaluator` no `harness`; `harness` is the composition root). A name imported
  from `interp_harness.sdk` is an edge to the layer that defines it (the SDK's `_WHERE`), since
  that is the module it loads; importing the SDK module itself (`import interp_harness.sdk`,
  `from interp_harness import sdk`) hides which, and counts as an edge to the root package;
- a family edge: in `function_store/` and `evaluator/`, a family folder (`<layer>/<family>/`)
  imports another family's folder, or shared code (any other module of those two layers) imports
  a family's folder: what families share sits in a shared module below them all;
- a private name (`_x`, not a dunder) imported from another module;
- an `importlib.import_module(...)` / `__import__(...)` call outside `DYNAMIC_IMPORTS`, since a
  dynamic import hides an edge from this check (a constant module argument is checked as an edge).
"""

from __future__ import annotations

import ast
import functools
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
ROOT_PACKAGE = "interp_harness"
# the checked root: the package's folder (folder name = import name)
SRC = REPO / "src" / ROOT_PACKAGE
# the parts: each a folder of the package and a layer of its own
PARTS = ("agents", "model_services", "function_store", "evaluator", "harness")
SDK = f"{ROOT_PACKAGE}.sdk"
_PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
# the layers whose subfolders are family folders or shared code
FAMILY_LAYERS = ("function_store", "evaluator")


def family_folders(pyproject: Mapping[str, Any]) -> frozenset[str]:
    """The folders of the built-in families: `<f>` of each entry point of the benchmark group
    into `interp_harness.function_store.<f>.benchmark` (`function_store/<f>/`, `evaluator/<f>/`)."""
    prefix = f"{ROOT_PACKAGE}.function_store."
    values = pyproject["project"]["entry-points"]["interp_harness.benchmarks"].values()
    return frozenset(v[len(prefix) :].split(".")[0] for v in values if v.startswith(prefix))


FAMILIES: frozenset[str] = family_folders(_PYPROJECT)
# top-level packages of this repository that no layer may import (scripts, tests, tools)
NOT_LIBRARIES = ("tests", "benchmarks", "scripts")
# the repository's folders of Python code, for the folder-name check
CODE_DIRS = ("src", *NOT_LIBRARIES)

# layer -> the layers of ours it may import (itself always)
ALLOWED: Mapping[str, frozenset[str]] = {
    "agents": frozenset(),  # runs in the agent host: the standard library and its own deps only
    # the model services (LM backbone, intervention): their servers run as their own processes,
    # their clients and wire schemas are what the layers above import
    "model_services": frozenset(),
    "function_store": frozenset({"model_services", "agents"}),
    "evaluator": frozenset({"function_store", "model_services", "agents"}),
    "harness": frozenset({"evaluator", "function_store", "model_services", "agents"}),
    # the root package: the SDK (which re-exports every part's public names) and the Inspect AI
    # task registry (`interp_harness/<task>`), both above harness
    ROOT_PACKAGE: frozenset(PARTS),
}

# Where a dynamic import is the point: a registry that imports what a name or a setting refers to.
# (file, enclosing function or "<module>") -> why. Every other call is a violation.
DYNAMIC_IMPORTS: Mapping[tuple[str, str], str] = {
    ("function_store/benchmark.py", "load_ref"): (
        "the one place a Benchmark record's `module:attr` references are imported, by the layer "
        "that uses them"
    ),
    ("function_store/runtime.py", "_ensure_registered"): (
        "imports the module that registers a runner kind, on first use"
    ),
    ("function_store/token_activations/corpus.py", "python_docs"): (
        "reads standard-library modules' docstrings as a text corpus; imports nothing of ours"
    ),
    ("agents/registry.py", "import_path"): "an agent given as `package.module:Class`",
    ("harness/settings.py", "load_plugins"): "plugin modules named in HARNESS_PLUGINS",
    ("harness/cli.py", "command_groups"): (
        "each interp_harness.harness.commands module adds its subcommands (COMMAND_MODULES)"
    ),
    ("harness/sandbox/base.py", "sandbox_class"): (
        "the sandbox backend chosen by name; optional backends (docker) import their own deps"
    ),
    ("harness/services.py", "load_score_hook"): "a score hook given as `package.module:function`",
    ("sdk/__init__.py", "__getattr__"): (
        "the public API loads each name from its part on first use, so a sandbox imports only "
        "the part its code needs (the table `_WHERE` is checked by test_sdk_surface.py)"
    ),
}


def sdk_names(root: Path) -> dict[str, str]:
    """The SDK's table (public name -> the module that defines it), read from `sdk/__init__.py`
    under `root` without importing it; empty when the tree has no SDK."""
    path = root / "sdk" / "__init__.py"
    if not path.is_file():
        return {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            if any(isinstance(t, ast.Name) and t.id == "_WHERE" for t in targets) and node.value:
                return ast.literal_eval(node.value)
    raise ValueError(f"{path} has no literal _WHERE table")


@dataclass(frozen=True, order=True)
class Violation:
    path: str  # relative to the checked root, with "/"
    line: int
    kind: str  # "layer" | "family" | "private" | "dynamic" | "namespace"
    message: str
    target: str = ""  # the imported module (or a dynamic import's constant module prefix)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: [{self.kind}] {self.message}"


def module_name(rel: Path) -> str:
    """The import name of a file given by its path from the package's folder (`harness/cli.py` ->
    `interp_harness.harness.cli`, `__init__.py` -> `interp_harness`)."""
    parts = [ROOT_PACKAGE, *rel.with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of_path(rel: Path) -> str:
    """The layer of a file given by its path from the package's folder: its part, or the root
    package's layer for the rest (`__init__.py`, `_registry.py`, `sdk/`)."""
    return rel.parts[0] if len(rel.parts) > 1 and rel.parts[0] in PARTS else ROOT_PACKAGE


def layer_of(module: str) -> str | None:
    """The layer an import name belongs to; None for the bare root package, whose `__init__`
    imports nothing, and for anything not ours."""
    names = module.split(".")
    if names[0] != ROOT_PACKAGE:
        return names[0] if names[0] in NOT_LIBRARIES else None
    if len(names) == 1:
        return None
    return names[1] if names[1] in PARTS else ROOT_PACKAGE


def resolve_from(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module a `from ... import` reads from (relative levels resolved)."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join([*base, node.module] if node.module else base)


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


class _Reader(ast.NodeVisitor):
    """Collects the imports of one file with the function each sits in."""

    def __init__(self, module: str, is_package: bool) -> None:
        self.module = module
        self.is_package = is_package
        self.scope: list[str] = []
        # (line, imported module, imported names or None for `import x`)
        self.imports: list[tuple[int, str, list[str] | None]] = []
        # (line, enclosing scope, constant module argument or None)
        self.dynamic: list[tuple[int, str, str | None]] = []

    def _scoped(self, node: ast.AST, name: str) -> None:
        self.scope.append(name)
        self.generic_visit(node)
        self.scope.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._scoped(node, node.name)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._scoped(node, node.name)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._scoped(node, node.name)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.imports.append((node.lineno, alias.name, None))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        target = resolve_from(node, self.module, self.is_package)
        self.imports.append((node.lineno, target, [a.name for a in node.names]))

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name in ("import_module", "__import__"):
            self.dynamic.append(
                (node.lineno, self.scope[-1] if self.scope else "<module>", _prefix(node))
            )
        self.generic_visit(node)


def _prefix(call: ast.Call) -> str | None:
    """The constant part of a dynamic import's module argument (`"a.b"`, `f"a.b.{x}"` -> `a.b`)."""
    if not call.args:
        return None
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values:
        head = arg.values[0]
        if isinstance(head, ast.Constant) and isinstance(head.value, str):
            return head.value.rstrip(".") or None
    return None


def edges_of(
    target: str, names: list[str] | None, where: Mapping[str, str]
) -> list[tuple[str, str]]:
    """(module, how) for what one import statement loads: a name from the SDK is its defining
    module (what the SDK imports on first use), a name from the bare root package is that
    subpackage; anything else is the module read from."""
    if target == SDK and names:
        return [
            (where[n], f"{n} through the SDK") if n in where else (SDK, f"{n}, not an SDK name")
            for n in names
        ]
    if target == ROOT_PACKAGE and names:
        return [(f"{ROOT_PACKAGE}.{n}", "") for n in names]
    return [(target, "")]


def _layer_edge(rel: str, line: int, layer: str, target: str, how: str) -> Violation | None:
    top = target.split(".")[0]
    if top in PARTS:
        msg = f"imports {target} ({how}); it is interp_harness.{top}"
        return Violation(rel, line, "namespace", msg, target)
    to = layer_of(target)
    if to is None or to == layer:
        return None
    if to in NOT_LIBRARIES or (to in ALLOWED and to not in ALLOWED[layer]):
        if target == SDK:
            how += "; import its names (`from interp_harness.sdk import X`): each is an edge to "
            how += "the layer that defines it"
        return Violation(rel, line, "layer", f"{layer} imports {target} ({how})", target)
    return None


def family_folder_of(module: str, families: Iterable[str]) -> str | None:
    """The family folder an import name is in (`interp_harness.evaluator.neurons.iia` ->
    `neurons`); None for shared code and anything outside function_store/ and evaluator/."""
    names = module.split(".")
    if len(names) < 3 or names[0] != ROOT_PACKAGE or names[1] not in FAMILY_LAYERS:
        return None
    return names[2] if names[2] in families else None


def _family_edge(
    rel_path: Path, line: int, target: str, how: str, families: frozenset[str]
) -> Violation | None:
    """A family importing another family's folder, or shared code importing a family's."""
    parts = rel_path.parts
    to = family_folder_of(target, families)
    if parts[0] not in FAMILY_LAYERS or to is None:
        return None
    own = parts[1] if len(parts) > 2 and parts[1] in families else None
    if own == to:
        return None
    rel = rel_path.as_posix()
    if own is None:
        msg = f"shared code imports {target} of family {to} ({how})"
    else:
        msg = (
            f"family {own} imports {target} of family {to} ({how}); "
            "share it through a module outside every family folder"
        )
    return Violation(rel, line, "family", msg, target)


def python_files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.py"))


@functools.cache  # each check of a test run reads the same files
def _read(path: Path, module: str) -> _Reader:
    reader = _Reader(module, path.name == "__init__.py")
    reader.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    return reader


def _read_in(root: Path, path: Path) -> _Reader:
    return _read(path, module_name(path.relative_to(root)))


def imports_of(root: Path, path: Path) -> list[tuple[int, str, list[str] | None]]:
    """(line, absolute module, names or None for `import x`) of every import in one file."""
    return _read_in(root, path).imports


def dynamic_import_sites(root: Path) -> set[tuple[str, str]]:
    """(file, enclosing function) of every dynamic import call, to keep the allow-list current."""
    return {
        (p.relative_to(root).as_posix(), scope)
        for p in python_files(root)
        for _, scope, _ in _read_in(root, p).dynamic
    }


def check_file(
    root: Path,
    path: Path,
    dynamic_allowed: Mapping[tuple[str, str], str],
    families: frozenset[str] = FAMILIES,
    where: Mapping[str, str] | None = None,
) -> list[Violation]:
    """The violations of one file; `where` is the SDK's table (read from `root` when None)."""
    where = sdk_names(root) if where is None else where
    rel_path = path.relative_to(root)
    rel = rel_path.as_posix()
    layer = layer_of_path(rel_path)
    reader = _read_in(root, path)
    out: list[Violation] = []
    for line, target, names in reader.imports:
        for module, through in edges_of(target, names, where):
            how = f"import of {through}" if through else "import"
            if (v := _layer_edge(rel, line, layer, module, how)) is not None:
                out.append(v)
            # `from interp_harness.evaluator import neurons` reads the family's folder too
            for mod in [module, *(f"{module}.{n}" for n in names or () if not through)]:
                if (v := _family_edge(rel_path, line, mod, how, families)) is not None:
                    out.append(v)
                    break
        for name in names or ():
            if target and target != reader.module and _is_private(name):
                out.append(
                    Violation(rel, line, "private", f"imports private {name} from {target}", target)
                )
    for line, scope, prefix in reader.dynamic:
        if (rel, scope) not in dynamic_allowed:
            out.append(
                Violation(rel, line, "dynamic", f"dynamic import in {scope} (not allow-listed)")
            )
        if prefix and (v := _layer_edge(rel, line, layer, prefix, "dynamic import")) is not None:
            out.append(v)
        if prefix and (v := _family_edge(rel_path, line, prefix, "dynamic import", families)):
            out.append(v)
    return out


def check_tree(
    root: Path,
    *,
    dynamic_allowed: Mapping[tuple[str, str], str] = DYNAMIC_IMPORTS,
    families: Iterable[str] = FAMILIES,
) -> list[Violation]:
    """Every violation of the import rules under `root` (the package's folder), sorted by file
    and line."""
    fams, where = frozenset(families), sdk_names(root)
    return sorted(
        v for p in python_files(root) for v in check_file(root, p, dynamic_allowed, fams, where)
    )


def folder_name_imports(repo: Path, dirs: Iterable[str] = CODE_DIRS) -> list[str]:
    """`file:line module` for every import, anywhere in the repository's code, of a part's folder
    name as a top-level package (`from harness.cli import ...`): it would work only with the
    package's folder on sys.path, and `agents` is another project's package."""
    out = []
    for d in dirs:
        base = repo / d
        for path in python_files(base):
            # a file's import name (for relative imports): from src/ it is the package's
            rel = path.relative_to(base if d == "src" else repo)
            reader = _read(path, ".".join(rel.with_suffix("").parts))
            for line, target, _ in reader.imports:
                if target.split(".")[0] in PARTS:
                    out.append(f"{path.relative_to(repo).as_posix()}:{line} {target}")
    return out


def orchestrator_edges(root: Path) -> dict[str, set[str]]:
    """Inside `harness`: unit -> the units it imports, where a unit is a subpackage or a
    top-level module (`runs`, `store`, `cli`)."""
    prefix = f"{ROOT_PACKAGE}.harness."
    edges: dict[str, set[str]] = {}
    for path in python_files(root / "harness"):
        parts = path.relative_to(root / "harness").parts
        unit = parts[0].removesuffix(".py")
        if unit == "__init__":
            continue
        for _, target, names in _read_in(root, path).imports:
            if target.startswith(prefix):
                to = target[len(prefix) :].split(".")[0]
            elif target == prefix[:-1] and names:  # `from interp_harness.harness import x`
                to = names[0]
            else:
                continue
            if to != unit:
                edges.setdefault(unit, set()).add(to)
    return edges


def cycles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one unit (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)
