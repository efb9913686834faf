"""The lab's sandbox under bubblewrap: `BwrapLabSandbox`, the registry's `lab-bwrap` (a
`Sandbox` that offers sessions), whose command line is harness/sandbox/bwrap.py's with the lab's
own mounts, in a cgroup of its own.

Inside, besides what every bwrap sandbox has (read-only system and Python prefix, no network,
uid 65534, a private size-capped /tmp, a cleared environment): the kernel and the generated
`target` module read-only at /opt/lab, and of the Python's installed packages only the
distributions the operator lists (HARNESS_LAB_PACKAGES: numpy, scipy, matplotlib) with what they
require. Every site-packages directory is covered by an empty read-only tmpfs and those
distributions' files are bound back into it, so nothing else installed (the harness itself, the
provider SDKs, an editable install's finder) can be imported.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import glob
import os
import re
import shutil
import signal
import site
import sys
import sysconfig
from importlib import metadata
from typing import IO, ClassVar

from interp_harness.harness.lab import frames
from interp_harness.harness.sandbox.base import Limits, Sandbox, SandboxError
from interp_harness.harness.sandbox.bwrap import (
    BwrapSandbox,
    options_via_fd,
    python_roots,
    write_files,
)
from interp_harness.harness.sandbox.cgroups import CgroupLimits
from interp_harness.harness.sandbox.env import launcher_env
from interp_harness.harness.sandbox.session import Session, tree_cpu_s
from interp_harness.harness.sandbox.spawn import spawn
from interp_harness.harness.sandbox.workdir import instance_dir

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


# where other Pythons' packages live under /usr (Debian's dist-packages, its pip wheels)
_FOREIGN = (
    "/usr/lib/python3*", "/usr/lib64/python3*", "/usr/local/lib/python3*",
    "/usr/share/python3*", "/usr/share/python-wheels",
)  # fmt: skip


def foreign_dirs() -> list[str]:
    """The package folders that are not this Python's: under /usr, a whole folder where none of
    this Python's paths lie within it, else its site-packages and dist-packages; in a venv, the
    base interpreter's site-packages."""
    sites = set(site_dirs())
    needed = {os.path.realpath(p) for p in sys.path if p and os.path.isdir(p)}
    needed |= {os.path.realpath(p) for p in sysconfig.get_paths().values()}
    out: set[str] = set()
    for pattern in _FOREIGN:
        for d in map(os.path.realpath, glob.glob(pattern)):
            if not os.path.isdir(d) or d in sites:
                continue
            if not any(n == d or n.startswith(d + "/") for n in needed):
                out.add(d)
                continue
            for sub in ("dist-packages", "site-packages"):
                if os.path.isdir(p := os.path.realpath(os.path.join(d, sub))) and p not in sites:
                    out.add(p)
    # in a venv, the base interpreter's own packages: its prefix is bound for the standard library,
    # and its site-packages came with it (everything installed beside the harness's base Python)
    base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}
    for key in ("purelib", "platlib"):
        p = os.path.realpath(sysconfig.get_path(key, vars=base))
        if os.path.isdir(p) and p not in sites and p not in needed:
            out.add(p)
    return sorted(out)


def package_mounts(packages: tuple[str, ...]) -> list[str]:
    """bwrap options: each site directory emptied, then `packages` bound back, read-only; the
    package folders of other Pythons under /usr emptied (bound whole with /usr, they held yaml,
    jwt, cryptography, dbus, apt_pkg...)."""
    dirs = [d for d in site_dirs() if _visible(d)]
    keep = package_paths(packages)
    args: list[str] = []
    for d in foreign_dirs():
        args += ["--size", "4096", "--tmpfs", d, "--remount-ro", d]
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
    python: str,
    files_dir: str,
    limits: Limits,
    tmp_mb: int,
    packages: tuple[str, ...],
    main: str = "kernel.py",
) -> tuple[list[str], int]:
    """The bwrap command of a lab whose kernel and `target` are in `files_dir`, its options in
    a memfd (close it once the process started)."""
    sandbox = BwrapSandbox(tmp_size_mb=tmp_mb, env=dict(LAB_ENV))
    mounts = ["--ro-bind", files_dir, LAB_DIR, *package_mounts(packages)]
    if os.path.isdir("/etc/fonts"):  # matplotlib's text, through fontconfig
        mounts += ["--ro-bind", "/etc/fonts", "/etc/fonts"]
    cmd = sandbox.command([python, "-I", f"{LAB_DIR}/{main}"], limits=limits, env={}, extra=mounts)
    return options_via_fd(cmd)


class BwrapJail:
    """bubblewrap in a cgroup of ours; `files_dir` is bound read-only at /opt/lab."""

    def __init__(
        self, proc: asyncio.subprocess.Process, cg: CgroupLimits | None, files_dir: str,
        limits: Limits,
    ) -> None:  # fmt: skip
        self.proc, self.cg, self.files_dir, self.limits = proc, cg, files_dir, limits

    def cpu_s(self) -> float:
        return tree_cpu_s(self.proc.pid)  # a few /proc reads: no thread hop needed

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # bwrap; its pid namespace takes the rest
        if self.cg:
            self.cg.kill_all()

    async def started(self) -> None:
        """Nothing to check: the process is ours."""

    async def why_dead(self, returncode: int | None) -> str | None:
        if self.cg is None:
            return None
        if self.cg.oom_killed():
            return f"the lab ran out of memory (limit {self.limits.memory_mb} MB)"
        rc = returncode
        sig = -rc if rc is not None and rc < 0 else (rc - 128 if rc and rc > 128 else 0)
        if sig == signal.SIGKILL and self.cg.pids_exhausted():
            return f"the lab's process was killed at its process limit ({self.limits.max_procs})"
        return None

    async def release(self) -> None:
        if self.cg:
            await asyncio.to_thread(self.cg.remove)
            self.cg = None
        shutil.rmtree(self.files_dir, ignore_errors=True)


class BwrapLabSandbox(Sandbox):
    """Labs under bubblewrap: the kernel with the lab's mounts (`lab_command`), in a cgroup of
    its own (processes, memory, one CPU) that `BwrapJail` reads and kills."""

    name = "lab-bwrap"
    offers: ClassVar[frozenset[str]] = frozenset({"session"})

    def __init__(self, *, tmp_mb: int = 64, packages: tuple[str, ...] = ()) -> None:
        self.tmp_mb, self.packages = tmp_mb, tuple(packages)

    async def _start_session(
        self, files: dict[str, bytes], main: str, limits: Limits, stderr: IO[bytes]
    ) -> Session:
        files_dir = write_files(files, "lab-", root=str(instance_dir()), mode=0o400)
        try:
            cmd, args_fd = lab_command(
                sys.executable, files_dir, limits, self.tmp_mb, self.packages, main
            )
        except SandboxError:
            shutil.rmtree(files_dir, ignore_errors=True)
            raise
        cg = CgroupLimits.create(
            pids=limits.max_procs, memory_bytes=limits.memory_mb * 1024 * 1024, cpu_quota=1.0
        )
        if cg:
            cg.open_join_fds()
        try:
            proc = await spawn(
                *cmd,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,
                preexec_fn=cg.preexec if cg else None,  # noqa: PLW1509 - only writes to an fd
                limit=frames.MAX_FRAME,
                pass_fds=(args_fd,),
                env=launcher_env(),  # bwrap's init lives on inside: none of our environment
            )
        except OSError as e:
            if cg:
                cg.remove()
            shutil.rmtree(files_dir, ignore_errors=True)
            raise SandboxError(f"the lab failed to start: {e}") from e
        finally:
            os.close(args_fd)
            if cg:
                cg.close_fds()
        return Session(proc, BwrapJail(proc, cg, files_dir, limits))
