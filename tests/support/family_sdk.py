"""The built-in families import the public SDK as a plugin does, checked on source text with `ast`.

In the family folders (`function_store/<f>/`, `evaluator/<f>/`) and the folders the families share
(`token_activations/`), a name the SDK exports (its `_WHERE`) is imported from `interp_harness.sdk`,
never from the module that defines it (nor by importing that module). Any other module of ours
that they import, outside their own family's folders, is an internal the SDK has no name for:
each must be listed with why (`internals_problems`), so the list is the SDK's to-do list.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from support.layering import FAMILY_LAYERS, ROOT_PACKAGE, SDK, imports_of

# folders below the families that only families use: checked like a family folder
SHARED_FAMILY_FOLDERS = ("token_activations",)


def family_files(root: Path, folders: Iterable[str]) -> dict[Path, str]:
    """Each file of the family folders under `root` -> its folder name."""
    return {
        path: folder
        for folder in sorted(folders)
        for layer in FAMILY_LAYERS
        for path in sorted((root / layer / folder).rglob("*.py"))
    }


def _own(module: str, folder: str) -> bool:
    """Whether `module` is in the folder's own code, in either layer."""
    return any(
        module == base or module.startswith(base + ".")
        for base in (f"{ROOT_PACKAGE}.{layer}.{folder}" for layer in FAMILY_LAYERS)
    )


def _modules(root: Path, target: str, names: list[str] | None) -> list[str]:
    """The modules one import reads: `from a import b` reads the module `a.b` when there is one,
    else `a`."""
    if names is None:
        return [target]
    return sorted({f"{target}.{n}" if _is_module(root, f"{target}.{n}") else target for n in names})


def _is_module(root: Path, module: str) -> bool:
    """Whether an import name is a module (file or package) under `root`, the package's folder."""
    base = root.joinpath(*module.split(".")[1:])
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def sdk_bypasses(root: Path, folders: Iterable[str], where: Mapping[str, str]) -> list[str]:
    """`file:line: ...` for each SDK name a family file imports from an internal module, and each
    import of a module that defines SDK names (its names would be reached around the SDK)."""
    defining = set(where.values())
    out = []
    for path, folder in family_files(root, folders).items():
        rel = path.relative_to(root).as_posix()
        for line, target, names in imports_of(root, path):
            if not target.startswith(ROOT_PACKAGE + ".") or target == SDK or _own(target, folder):
                continue
            public = sorted(n for n in names or () if n in where)
            if public:
                out.append(
                    f"{rel}:{line}: imports {', '.join(public)} from {target}; import it from {SDK}"
                )
            for module in _modules(root, target, names):
                if module != target or names is None:  # `import m`, `from p import m`
                    if module in defining:
                        out.append(
                            f"{rel}:{line}: imports the module {module}, which defines SDK names; "
                            f"import them from {SDK}"
                        )
    return out


def internal_imports(root: Path, folders: Iterable[str]) -> dict[str, set[str]]:
    """Module of ours (not the SDK, not the family's own) -> the family files that import it."""
    out: dict[str, set[str]] = {}
    for path, folder in family_files(root, folders).items():
        rel = path.relative_to(root).as_posix()
        for _, target, names in imports_of(root, path):
            if not target.startswith(ROOT_PACKAGE + ".") or target == SDK:
                continue
            for module in _modules(root, target, names):
                if not _own(module, folder) and _is_module(root, module):
                    out.setdefault(module, set()).add(rel)
    return out


def internals_problems(imported: Mapping[str, set[str]], allowed: Mapping[str, str]) -> list[str]:
    """Internals imported but not listed (an entry covers a module and its submodules), and
    entries no family imports any more."""

    def covered(module: str, entry: str) -> bool:
        return module == entry or module.startswith(entry + ".")

    out = [
        f"{m} is imported by {', '.join(sorted(files))} and not listed (import it from {SDK}, "
        "or list it with the reason the SDK has no name for it)"
        for m, files in sorted(imported.items())
        if not any(covered(m, e) for e in allowed)
    ]
    out += [
        f"{e} is listed but no family imports it any more"
        for e in sorted(allowed)
        if not any(covered(m, e) for m in imported)
    ]
    return out
