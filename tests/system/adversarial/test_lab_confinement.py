"""A bubblewrap lab (and any bwrap sandbox: agent hosts, services, scoring) writing outside its
capped /tmp, and reading other Pythons' packages (issue 49, items 4 and 5).

60 MB files could be written into `/`, `/etc`, `/opt` and `/dev/shm` (writable tmpfs that bwrap
makes), bounded only by the memory cgroup; and appending Debian's dist-packages to `sys.path`
imported yaml, jwt, cryptography, dbus, apt_pkg (`/usr` is bound whole). Now the root and /dev are
read-only, /dev/shm is capped, and every package folder under /usr other than this Python's is
empty. Each starts its own lab (no server needed)."""

from __future__ import annotations

import asyncio
import json
import sys

from interp_harness.function_store.benchmark import benchmark
from interp_harness.harness.lab.frames import Call, CallResult
from interp_harness.harness.lab.limits import LabLimits
from interp_harness.harness.lab.sandbox import package_paths
from interp_harness.harness.lab.session import Lab
from interp_harness.harness.sandbox.base import Limits
from interp_harness.harness.sandbox.bwrap import SHM_MB, BwrapSandbox

# writes 1 MB files where it can, then fills /dev/shm: what each place took, in MB
WRITE = r"""
import json, os
took = {}
for d in ("/", "/etc", "/opt", "/opt/lab", "/dev", "/usr", "/var", "/run", "/home", "/dev/shm"):
    n = 0
    try:
        os.makedirs(d, exist_ok=True)
        for i in range(64 if d == "/dev/shm" else 2):
            with open(os.path.join(d, f"fill{i}"), "wb") as f:
                f.write(b"x" * (1 << 20))
            n += 1
    except OSError:
        pass
    took[d] = n
print(json.dumps(took))
"""

# every package folder a cell can find, what it lists, and what imports from Debian's
FIND = r"""
import glob, json, os, sys
roots = ["/usr", sys.prefix, sys.base_prefix]
found = {}
for r in roots:
    for depth in range(1, 6):
        for d in glob.glob(os.path.join(r, *["*"] * depth)):
            if os.path.basename(d) in ("site-packages", "dist-packages", "python-wheels"):
                try:
                    found[d] = sorted(os.listdir(d))
                except OSError as e:
                    found[d] = [repr(e)]
imported = []
sys.path += [d for d in found] + ["/usr/lib/python3/dist-packages"]
for name in ("yaml", "jwt", "cryptography", "OpenSSL", "gi", "dbus", "apt_pkg", "pip"):
    try:
        __import__(name)
        imported.append(name)
    except Exception:
        pass
print(json.dumps({"found": found, "imported": imported}))
"""


async def _no_calls(frame: Call) -> CallResult:
    return CallResult(id=frame.id, ok=False, kind="refused", error="no calls here")


def _cell(code: str) -> str:
    async def main() -> str:
        lab = Lab(benchmark("numeric").commands, LabLimits(backend="bwrap"))
        try:
            cell = await lab.run(code, _no_calls)
        finally:
            await lab.aclose()
        assert cell.status == "ok", (cell.error, cell.traceback)
        return cell.stdout

    return asyncio.run(main())


def test_a_lab_writes_only_its_capped_tmp_and_shm() -> None:
    took = json.loads(_cell(WRITE))
    assert took.pop("/dev/shm") <= SHM_MB, took  # capped (64 files were tried)
    assert took == {d: 0 for d in took}, took


def test_any_bwrap_sandbox_writes_only_tmp_and_shm() -> None:
    """The same command line as agent hosts and services (BwrapSandbox._argv)."""
    res = BwrapSandbox().run([sys.executable, "-I", "-c", WRITE], limits=Limits(timeout_s=60))
    assert res.returncode == 0, res.stderr[-2000:]
    took = json.loads(res.stdout)
    assert took.pop("/dev/shm") <= SHM_MB, took
    assert took == {d: 0 for d in took}, took


def test_a_lab_sees_no_package_folder_but_its_own() -> None:
    seen = json.loads(_cell(FIND))
    allowed = {p.rsplit("/", 1)[1] for p in package_paths(("numpy", "scipy", "matplotlib"))}
    assert seen["found"], "no package folder found at all: the search is broken"
    for d, names in seen["found"].items():
        assert set(names) <= allowed, (d, sorted(set(names) - allowed)[:20])
    assert seen["imported"] == [], seen["imported"]
