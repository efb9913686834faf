"""The wheelhouse a bare GPU machine installs the intervention service from (scripts/device_check.sh).

Such a machine has Python, torch with CUDA and transformers, and no package registry. Everything
else the service, its client and the `harness` command import is carried as wheels. They are
built here (`build`, with the registry) and installed there (`install`, no registry, stdlib only):

    python benchmarks/device_wheelhouse.py build [--dest .device/wheelhouse] [--python 3.11 3.12]
        [--budget-mib 64] [--carried PATH ...]
    python benchmarks/device_wheelhouse.py check [--dest .device/wheelhouse] [--budget-mib 64]
        [--carried PATH ...]
    python benchmarks/device_wheelhouse.py install --wheelhouse DIR --target DIR [--report FILE]

`build` takes the versions installed here (the ones the test suite runs with) of ROOTS and of
what they require, leaving out the machine's own packages (MACHINE: torch, transformers and the
compiled packages transformers needs), one pure wheel per package where one exists, else one per
Python version; it writes `manifest.json` and refuses a set that, with the other carried paths,
passes the budget (the machine takes 64 MiB beside the working tree). `install` keeps every
package the machine already has at a version our requirements accept, installs the others with
`pip install --no-index --no-deps --target` (never torch: MACHINE packages are refused), and
checks afterwards that torch is still the machine's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"
DEFAULT_DEST = Path(".device/wheelhouse")
DEFAULT_PYTHONS = ("3.11", "3.12")
BUDGET_MIB = 64.0
# Linux x86-64 wheels, oldest glibc first (pip prefers the earlier tags)
PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64")

# what the device check imports beyond torch and transformers, with why
ROOTS: dict[str, str] = {
    "pyvene": "the intervention engine (its declared requirements are not imported: not followed)",
    "matplotlib": "pyvene imports matplotlib.pyplot when imported",
    "fastapi": "the service",
    "uvicorn": "the service (plain: the `standard` extra is not needed)",
    "httpx": "the client",
    "pydantic": "schemas",
    "pydantic-settings": "client settings",
    "typer": "the `harness` command",
    "rich": "the `harness` command",
    "sqlmodel": "the `harness` command imports the store's engine at start",
}
NO_DEPS = {"pyvene"}
# the machine's own: never carried, never installed (torch must stay the machine's CUDA build;
# the compiled ones are built against the machine's numpy and torch)
MACHINE = {
    "torch",
    "transformers",
    "triton",
    "numpy",
    "tokenizers",
    "safetensors",
    "regex",
    "pyyaml",
    "huggingface-hub",
    "hf-xet",
    "packaging",
    "filelock",
    "fsspec",
    "tqdm",
    "sympy",
    "mpmath",
    "networkx",
    "jinja2",
    "markupsafe",
    "setuptools",
}
# not carried, with why (the device check's SAELens step says it was skipped)
LEFT_OUT = {
    "sae-lens": "SAELens SAEs: sae-lens requires datasets (pyarrow, pandas) and transformer-lens "
    "(wandb), each far over 64 MiB for one Python version; its device step is skipped",
}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def is_machine(name: str) -> bool:
    n = canonical(name)
    return n in MACHINE or n.startswith("nvidia-")


def mib(n: int) -> float:
    return n / 2**20


# ---- build (here, with the registry) ----------------------------------------------------------
def closure(pythons: list[str]) -> dict[str, dict[str, Any]]:
    """{name: {"version": installed here, "specs": [what our requirements say of it]}} for ROOTS
    and their requirements (markers evaluated for each Python version), MACHINE packages left out
    but their specs kept under their own name with "machine": True."""
    import importlib.metadata as md

    from packaging.requirements import Requirement

    out: dict[str, dict[str, Any]] = {}
    todo = [(r, None) for r in ROOTS]
    seen: set[str] = set()
    while todo:
        name, spec = todo.pop()
        n = canonical(name)
        entry = out.setdefault(n, {"specs": [], "machine": is_machine(n)})
        if spec:
            entry["specs"].append(spec)
        if n in seen:
            continue
        seen.add(n)
        try:
            entry["version"] = md.version(n)
        except md.PackageNotFoundError as e:
            raise SystemExit(f"{n} is not installed here: pip install -e '.[dev]' first") from e
        if entry["machine"] or n in NO_DEPS:
            continue
        for text in md.requires(n) or []:
            req = Requirement(text)
            envs = [{"python_version": p, "extra": ""} for p in pythons]
            if req.marker is None or any(req.marker.evaluate(e) for e in envs):
                todo.append((req.name, f"{canonical(req.name)}{req.specifier}"))
    return out


def _pip_download(name: str, version: str, dest: Path, tags: list[str]) -> Path | None:
    """One wheel of name==version for the given pip download tag options, or None."""
    with tempfile.TemporaryDirectory(dir=dest) as tmp:
        p = subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"]
            + ["--dest", tmp, *tags, f"{name}=={version}"],
            capture_output=True,
            text=True,
        )
        wheels = list(Path(tmp).glob("*.whl"))
        if p.returncode != 0 or len(wheels) != 1:
            return None
        target = dest / wheels[0].name
        shutil.move(str(wheels[0]), target)
        return target


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def build(dest: Path, pythons: list[str]) -> dict[str, Any]:
    """Download the wheels into `dest` (emptied first) and write its manifest."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    wanted = closure(pythons)
    wheels: list[dict[str, Any]] = []
    missing: list[str] = []
    plats = [a for p in PLATFORMS for a in ("--platform", p)]
    for name, entry in sorted(wanted.items()):
        if entry["machine"]:
            continue
        version = entry["version"]
        for py in pythons:
            tag = "cp" + py.replace(".", "")
            pure = ["--implementation", "py", "--abi", "none", "--platform", "any"]
            options = [  # a pure wheel where there is one: one file for every Python version
                ["--python-version", py, *pure],
                ["--python-version", py, "--implementation", "cp", "--abi", tag, *plats],
                ["--python-version", py, "--implementation", "cp", "--abi", "abi3", *plats],
            ]
            got = next((w for o in options if (w := _pip_download(name, version, dest, o))), None)
            if got is None:
                missing.append(f"{name}=={version} for Python {py}")
                continue
            same = [w for w in wheels if w["file"] == got.name]
            if same:  # a pure or abi3 wheel: the same file serves every Python version
                same[0]["pythons"].append(tag)
            else:
                wheels.append(
                    {"name": name, "version": version, "pythons": [tag], "file": got.name}
                )
    for w in wheels:
        path = dest / w["file"]
        w["size"] = path.stat().st_size
        w["sha256"] = _sha256(path)
    manifest = {
        "pythons": ["cp" + p.replace(".", "") for p in pythons],
        "wheels": wheels,
        "requires": {n: e["specs"] for n, e in sorted(wanted.items()) if e["specs"]},
        "machine": sorted(n for n, e in wanted.items() if e["machine"]),
        "left_out": LEFT_OUT,
        "missing": missing,
    }
    (dest / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


# ---- the size check ---------------------------------------------------------------------------
def tree_size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def size_check(paths: list[Path], budget_mib: float = BUDGET_MIB) -> tuple[int, list[str]]:
    """(bytes of every path together, problems): a problem when they pass `budget_mib` or a path
    is missing."""
    problems = [f"{p}: missing" for p in paths if not p.exists()]
    total = sum(tree_size(p) for p in paths if p.exists())
    if total > budget_mib * 2**20:
        problems.append(
            f"{mib(total):.2f} MiB carried, over the budget of {budget_mib:g} MiB beside the "
            "working tree: leave a Python version or a package out"
        )
    return total, problems


def listing(dest: Path) -> list[str]:
    """One line per wheel of the manifest, largest first, then the total."""
    manifest = json.loads((dest / MANIFEST).read_text())
    rows = sorted(manifest["wheels"], key=lambda w: -w["size"])
    lines = [f"{mib(w['size']):7.2f} MiB  {w['file']}" for w in rows]
    total = sum(w["size"] for w in rows)
    lines.append(f"{mib(total):7.2f} MiB  {len(rows)} wheels for {', '.join(manifest['pythons'])}")
    return lines


# ---- install (on the machine, stdlib only) ----------------------------------------------------
def _satisfies(version: str, specs: list[str]) -> bool:
    """Whether an installed version meets every spec; True when `packaging` (which transformers
    requires) is absent, so the machine's package is kept."""
    try:
        from packaging.requirements import Requirement
    except ImportError:
        return True
    return all(Requirement(s).specifier.contains(version, prereleases=True) for s in specs)


def plan(manifest: dict[str, Any], python_tag: str) -> dict[str, Any]:
    """What `install` does on this Python: {"install": [wheel entries], "kept": [...],
    "refused": [...], "no_wheel": [...], "machine_unsatisfied": [...]}."""
    import importlib.metadata as md

    out: dict[str, list[Any]] = {
        "install": [],
        "kept": [],
        "refused": [],
        "no_wheel": [],
        "machine_unsatisfied": [],
    }
    requires = manifest.get("requires", {})
    by_name: dict[str, list[dict[str, Any]]] = {}
    for w in manifest["wheels"]:
        by_name.setdefault(w["name"], []).append(w)
    for name, wheels in sorted(by_name.items()):
        if is_machine(name):
            out["refused"].append(name)  # a hand-edited manifest must never replace torch
            continue
        try:
            have = md.version(name)
        except md.PackageNotFoundError:
            have = None
        if have is not None and _satisfies(have, requires.get(name, [])):
            out["kept"].append(f"{name} {have}")
            continue
        fit = [w for w in wheels if python_tag in w["pythons"]]
        if not fit:
            tags = sorted({t for w in wheels for t in w["pythons"]})
            out["no_wheel"].append(f"{name} (wheels for {', '.join(tags)})")
            continue
        out["install"].append(fit[0])
    for name in manifest.get("machine", []):
        try:
            have = md.version(name)
        except md.PackageNotFoundError:
            out["machine_unsatisfied"].append(f"{name}: not installed")
            continue
        if not _satisfies(have, requires.get(name, [])):
            out["machine_unsatisfied"].append(f"{name} {have}: we require {requires.get(name)}")
    return out


def _unzip(wheel: Path, target: Path) -> None:
    """A wheel installed by unpacking it (no pip on the machine): packages sit at its root."""
    with zipfile.ZipFile(wheel) as z:
        z.extractall(target)


def install(wheelhouse: Path, target: Path) -> dict[str, Any]:
    """Install what this machine lacks into `target` (put it on PYTHONPATH); the report."""
    import importlib.metadata as md

    manifest = json.loads((wheelhouse / MANIFEST).read_text())
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    torch_before = _torch_where()
    p = plan(manifest, tag)
    target.mkdir(parents=True, exist_ok=True)
    files = [wheelhouse / w["file"] for w in p["install"]]
    for w, f in zip(p["install"], files, strict=True):
        if _sha256(f) != w["sha256"]:
            raise SystemExit(f"{f.name}: checksum differs from the manifest")
    how = "nothing to install"
    if files:
        pip = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True)
        if pip.returncode == 0:
            how = "pip install --no-index --no-deps --target"
            cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps"]
            cmd += ["--disable-pip-version-check", "--target", str(target), *map(str, files)]
            subprocess.run(cmd, check=True)
        else:
            how = "unpacked (no pip on this machine)"
            for f in files:
                _unzip(f, target)
    sys.path.insert(0, str(target))
    torch_after = _torch_where(extra_path=target)
    return {
        "python": sys.version.split()[0],
        "python_tag": tag,
        "how": how,
        "installed": [
            {"file": w["file"], "size_mib": round(mib(w["size"]), 2)} for w in p["install"]
        ],
        "installed_mib": round(mib(sum(w["size"] for w in p["install"])), 2),
        "kept_machine": p["kept"],
        "refused": p["refused"],
        "no_wheel": p["no_wheel"],
        "machine_unsatisfied": p["machine_unsatisfied"],
        "torch": torch_before,
        "torch_unchanged": torch_before == torch_after,
        "transformers": _version(md, "transformers"),
    }


def _version(md: Any, name: str) -> str | None:
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None


def _torch_where(extra_path: Path | None = None) -> str:
    """torch's version and folder as a fresh interpreter sees them (with `extra_path` first on
    its path, as the device check runs)."""
    env = dict(os.environ)
    if extra_path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(extra_path), env.get("PYTHONPATH", "")])
    code = "import importlib.util as u, importlib.metadata as m; s = u.find_spec('torch'); "
    code += "print(m.version('torch') if s else 'absent', s.origin if s else '')"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    return p.stdout.strip() or f"unreadable: {p.stderr.strip()[-200:]}"


# ---- command line -----------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="download the wheels (with the registry), check the size")
    c = sub.add_parser("check", help="check the size of what is carried")
    for p in (b, c):
        p.add_argument("--dest", type=Path, default=DEFAULT_DEST)
        p.add_argument("--budget-mib", type=float, default=BUDGET_MIB)
        p.add_argument("--carried", type=Path, nargs="*", default=[], help="other carried paths")
    b.add_argument("--python", nargs="+", default=list(DEFAULT_PYTHONS))
    i = sub.add_parser("install", help="install what this machine lacks (no registry)")
    i.add_argument("--wheelhouse", type=Path, required=True)
    i.add_argument("--target", type=Path, required=True)
    i.add_argument("--report", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.cmd == "install":
        report = install(args.wheelhouse, args.target)
        text = json.dumps(report, indent=1)
        if args.report:
            args.report.write_text(text + "\n")
        print(
            f"installed {len(report['installed'])} wheels ({report['installed_mib']} MiB, "
            f"{report['how']}) for Python {report['python']}; kept the machine's "
            f"{len(report['kept_machine'])}; torch {report['torch']}, "
            f"unchanged: {report['torch_unchanged']}"
        )
        for key in ("no_wheel", "refused", "machine_unsatisfied"):
            if report[key]:
                print(f"{key}: {', '.join(report[key])}")
        return 0 if report["torch_unchanged"] and not report["no_wheel"] else 1
    if args.cmd == "build":
        manifest = build(args.dest, args.python)
        if manifest["missing"]:
            print("no wheel for: " + ", ".join(manifest["missing"]))
        for line in listing(args.dest):
            print(line)
        for name, why in manifest["left_out"].items():
            print(f"left out: {name}: {why}")
    total, problems = size_check([args.dest, *args.carried], args.budget_mib)
    print(f"carried: {mib(total):.2f} MiB of {args.budget_mib:g} MiB")
    for p in problems:
        print(f"refused: {p}")
    missing = args.cmd == "build" and bool(manifest["missing"])
    return 1 if problems or missing else 0


if __name__ == "__main__":
    sys.exit(main())
