"""Where sandboxes keep their host-side files, and the sweep of what killed processes left behind.

Everything lives under one private root, `$TMPDIR/interp-harness-<uid>/` (mode 0700, this uid).
Each process that starts sandboxes gets `proc-<pid>-<random>.lock`, which it holds an flock on
for its whole life, and a directory of the same name for its sandbox files (`sbx-files-*`,
`sbx-svc-*`). The lock is created before the directory and removed after it, so:
- a lock that can be taken belongs to a dead process: its directory and any sandbox process still
  bound to it (bwrap's command line names it) are removed;
- a directory without its lock is an orphan of an interrupted removal;
- a lock held by a live process (another server sharing the machine) is never touched.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import logging
import os
import secrets
import shutil
import signal
import stat
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from interp_harness.harness.sandbox.base import SandboxError

log = logging.getLogger(__name__)

PREFIX = "proc-"
# sockets live at <root>/proc-<pid>-<8 hex>/sbx-svc-<8>/backbone.sock; sun_path holds 107 bytes
_MAX_ROOT_LEN = 107 - len("/proc-4194304-01234567/sbx-svc-01234567/backbone.sock")


def project_root() -> Path:
    """`$TMPDIR/interp-harness-<uid>`, created private; refused when someone else made it."""
    root = Path(tempfile.gettempdir()) / f"interp-harness-{os.getuid()}"
    if len(str(root)) > _MAX_ROOT_LEN:
        raise SandboxError(
            f"{root} is too long for the Unix sockets of sandboxed services (at most "
            f"{_MAX_ROOT_LEN} characters here; a socket path has 107): set TMPDIR shorter"
        )
    with contextlib.suppress(FileExistsError):
        root.mkdir(mode=0o700)
    st = os.lstat(root)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise SandboxError(
            f"{root} must be a directory owned by uid {os.getuid()} with mode 0700 (it is not: "
            "refusing to keep sandbox files there); remove it or set TMPDIR"
        )
    return root


@dataclass
class _Instance:
    path: Path
    lock_fd: int
    pid: int


_INSTANCE: _Instance | None = None
_LOCK = threading.Lock()


def instance_dir() -> Path:
    """This process's directory for sandbox files (created, and locked, on first use)."""
    global _INSTANCE
    with _LOCK:
        if _INSTANCE is None or _INSTANCE.pid != os.getpid():  # a forked child gets its own
            root = project_root()
            name = f"{PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
            # locked before it appears under its name: a sweeper never sees it unlocked
            tmp = root / f".new-{name}"
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.rename(tmp, root / f"{name}.lock")
            (root / name).mkdir(mode=0o700)
            _INSTANCE = _Instance(root / name, fd, os.getpid())
        return _INSTANCE.path


@atexit.register
def release_instance() -> None:
    """Remove this process's directory once no sandbox of it runs (server shutdown, exit). A
    signal that kills the process skips this; the next start's sweep does it then."""
    global _INSTANCE
    with _LOCK:
        inst, _INSTANCE = _INSTANCE, None
    if inst is not None and inst.pid == os.getpid():
        shutil.rmtree(inst.path, ignore_errors=True)
        with contextlib.suppress(OSError):
            os.unlink(f"{inst.path}.lock")
        os.close(inst.lock_fd)


def processes_bound_to(d: Path) -> list[int]:
    """This uid's processes that use a path inside `d`: named on their command line, or mounted
    in their namespace (a sandbox's bind mounts; bwrap takes its options through a memfd, so its
    command line no longer names them). Matched by `d`'s unique name, since a mount's root is
    relative to its file system (e.g. a tmpfs /tmp)."""
    inside = str(d) + "/"
    name = f"/{d.name}"
    found = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if p.stat().st_uid != os.getuid():
                continue
            args = (p / "cmdline").read_bytes().decode("utf-8", "replace").split("\0")
            if any(a == str(d) or a.startswith(inside) for a in args) or any(
                f"{name}/" in line or line.split(" ")[3].endswith(name)
                for line in (p / "mountinfo").read_text().splitlines()
            ):
                found.append(int(p.name))
    return found


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.getpgid(pid) == pid:  # sandboxes start in their own session: take the group
            os.killpg(pid, signal.SIGKILL)
        os.kill(pid, signal.SIGKILL)


def sweep_stale() -> list[Path]:
    """Remove what dead processes of this project left under the root; returns what it removed."""
    root = project_root()
    own = _INSTANCE.path.name if _INSTANCE is not None and _INSTANCE.pid == os.getpid() else None
    removed: list[Path] = []
    for lock in sorted(root.glob(f"{PREFIX}*.lock")):
        name = lock.name.removesuffix(".lock")
        if name == own:
            continue
        try:
            fd = os.open(lock, os.O_RDWR | os.O_NOFOLLOW)
        except OSError:
            continue  # removed meanwhile by another sweeper
        try:
            if os.fstat(fd).st_uid != os.getuid():
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # its process is alive
            removed.append(_remove(root / name))
            with contextlib.suppress(OSError):
                lock.unlink()
        finally:
            os.close(fd)
    for d in root.glob(f"{PREFIX}*"):
        if d.is_dir() and not d.is_symlink() and not Path(f"{d}.lock").exists():
            removed.append(_remove(d))
    if removed:
        log.info("swept %d stale sandbox directories under %s", len(removed), root)
    return removed


def _remove(d: Path) -> Path:
    for pid in processes_bound_to(d):
        log.warning("killing stale sandbox process %d (bound to %s)", pid, d)
        _kill(pid)
    shutil.rmtree(d, ignore_errors=True)
    return d
