"""The lab's sandbox: the bubblewrap command line of one lab (harness/sandbox/bwrap.py's
backend, with the lab's own mounts).

Inside, besides what every bwrap sandbox has (read-only system and Python prefix, no network,
uid 65534, a private size-capped /tmp, a cleared environment): the kernel and the generated
`target` module read-only at /opt/lab, and of the Python's installed packages only the
distributions the operator lists (HARNESS_LAB_PACKAGES: numpy, scipy, matplotlib) with what they
require. Every site-packages directory is covered by an empty read-only tmpfs and those
distributions' files are bound back into it, so nothing else installed (the harness itself, the
provider SDKs, an editable install's finder) can be imported.
"""

from __future__ import annotations

import functools
import os
import re
import site
import sysconfig
from importlib import metadata

from interp_harness.harness.sandbox.base import Limits, SandboxError
from interp_harness.harness.sandbox.bwrap import BwrapSandbox, options_via_fd, python_roots

LAB_DIR = "/opt/lab"  # the kernel and `target`, read-only
LAB_ENV = {"MPLBACKEND": "Agg", "MPLCONFIGDIR": "/tmp/.matplotlib"}


def site_dirs() -> list[str]:
    """The site-packages directories this Python reads, as real paths."""
    found = list(site.getsitepackages())
    paths = sysconfig.get_paths()
    found += [paths["purelib"], paths["platlib"]]
    if site.ENABLE_USER_SITE:
        found.append(site.getusersitepackages())
    return sorted({os.path.realpath(p) for p in found if os.path.isdir(p)})


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.lru_cache(maxsize=8)
def package_paths(packages: tuple[str, ...]) -> tuple[str, ...]:
    """The files and directories (top-level entries of site-packages) of `packages` and every
    distribution they require. SandboxError naming a distribution that is not installed."""
    from packaging.requirements import Requirement

    todo, seen, out = list(packages), set(), set()
    while todo:
        name = todo.pop()
        if _key(name) in seen:
            continue
        seen.add(_key(name))
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise SandboxError(
                f"HARNESS_LAB_PACKAGES names {name!r}, which is not installed for this Python"
            ) from None
        for f in dist.files or ():
            top = f.parts[0] if f.parts else ""
            if top in ("", "..", "__pycache__") or top.endswith((".dist-info", ".egg-info")):
                continue
            path = os.path.realpath(str(dist.locate_file(top)))
            if os.path.exists(path):
                out.add(path)
        for r in dist.requires or ():
            req = Requirement(r)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return tuple(sorted(out))


def package_mounts(packages: tuple[str, ...]) -> list[str]:
    """bwrap options: each site directory emptied, then `packages` bound back, read-only."""
    dirs = [d for d in site_dirs() if _visible(d)]
    keep = package_paths(packages)
    args: list[str] = []
    for d in dirs:
        args += ["--size", str(1 << 20), "--tmpfs", d]
        for p in keep:
            if os.path.dirname(p) == d:
                args += ["--ro-bind", p, p]
        args += ["--remount-ro", d]
    return args


def _visible(path: str) -> bool:
    roots = [*python_roots(), "/usr"]
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def lab_command(
    python: str, files_dir: str, limits: Limits, tmp_mb: int, packages: tuple[str, ...]
) -> tuple[list[str], int]:
    """The bwrap command of a lab whose kernel and `target` are in `files_dir`, its options in
    a memfd (close it once the process started)."""
    sandbox = BwrapSandbox(tmp_size_mb=tmp_mb, env=dict(LAB_ENV))
    mounts = ["--ro-bind", files_dir, LAB_DIR, *package_mounts(packages)]
    if os.path.isdir("/etc/fonts"):  # matplotlib's text, through fontconfig
        mounts += ["--ro-bind", "/etc/fonts", "/etc/fonts"]
    cmd = sandbox.command(
        [python, "-I", f"{LAB_DIR}/kernel.py"], limits=limits, env={}, extra=mounts
    )
    return options_via_fd(cmd)
