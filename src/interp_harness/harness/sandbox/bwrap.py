"""The bubblewrap backend: the default sandbox on one machine.

Inside: every namespace unshared (no network at all: only a private loopback), uid/gid 65534, no
capabilities, a read-only view of the system (/usr and the Python prefix), a private /tmp (tmpfs,
size-capped), `files` read-only at /sandbox/<name>, and a cleared environment. Limits: a cgroup
(processes, memory, CPU quota) where one is writable, and rlimits (address space, CPU time, file
size, open files, no core dumps) always, applied inside by util-linux `prlimit`. The tree dies with
its parent (`--die-with-parent`, plus a pid namespace whose init takes everything with it).

bwrap itself starts with a minimal environment (interp_harness.harness.sandbox.env): its init stays PID 1 inside,
where any sandboxed process can read /proc/1/environ, and holds the sandbox's stdin, stdout and
stderr, which any sandboxed process can open through /proc/1/fd. So those are untrusted text; a
result that must not be forged travels on a pipe passed as a descriptor above 2, which bwrap's
init closes (`run(result_channel=True)`).

Services talk to the orchestrator over a Unix socket only: the orchestrator binds it in a host
directory that no sandbox sees and passes the listening descriptor in (HARNESS_SERVICE_FD); it
speaks HTTP over it. Target code in the service's sandbox (same uid) can thus not unlink, replace
or accept on it (the service makes itself undumpable; see interp_harness.function_store.service.isolation). The
sandbox has no route anywhere else (the chosen alternative to a loopback exception, which bwrap
cannot express: a network namespace either shares the host's stack or has none). A service that
must reach one more endpoint (the LM backbone of neural-module targets) gets a second socket,
bound read-only at /run/sandbox, that a host-side forwarder connects to that single host:port;
see `interp_harness.function_store.service.forward`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote

from interp_harness.harness.sandbox.base import (
    Limits,
    RunResult,
    Sandbox,
    SandboxError,
    ServiceHandle,
)
from interp_harness.harness.sandbox.cgroups import CgroupLimits
from interp_harness.harness.sandbox.env import RESULT_FD_ENV, launcher_env, sandbox_env
from interp_harness.harness.sandbox.workdir import instance_dir

log = logging.getLogger(__name__)

SANDBOX_UID = 65534  # nobody
SHM_MB = 16  # the private /dev/shm (POSIX semaphores and shared memory), besides /tmp
_INNER_DIR = "/sandbox"
_SERVICE_DIR = "/run/sandbox"
_SERVICE_SOCKET = f"{_SERVICE_DIR}/service.sock"


def check_file_name(name: str) -> str:
    """A file handed to a sandbox: a relative path of plain parts (no `..`, no hidden parts, no
    NUL, no absolute path), e.g. `code.py` or `scripts/f1/function_code.py`."""
    parts = name.split("/")
    if not name or "\0" in name or any(not p or p.startswith(".") for p in parts):
        raise ValueError(f"invalid sandbox file name {name!r}: use a plain name such as 'code.py'")
    return name


def write_files(
    files: dict[str, bytes] | None, prefix: str, *, root: str | None = None, mode: int | None = None
) -> str:
    """A new temp directory (under `root`) holding `files` (checked names), each chmod `mode`."""
    d = tempfile.mkdtemp(prefix=prefix, dir=root)
    for name, data in (files or {}).items():
        p = Path(d) / check_file_name(name)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        if mode is not None:
            p.chmod(mode)
    return d


def python_roots() -> list[str]:
    """Directories the sandboxed Python needs, read-only: its prefix (stdlib, site-packages) and
    any other site directory on its path (a venv layered on another environment's site-packages,
    where the packages it runs are installed). Never a plain path entry such as a checkout."""
    roots = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)}
    roots |= {
        os.path.realpath(p)
        for p in sys.path
        if os.path.basename(p) in ("site-packages", "dist-packages") and os.path.isdir(p)
    }
    return sorted(r for r in roots if not r.startswith("/usr/"))


class Capped:
    """Drains a pipe in a thread, keeping at most `cap` bytes (the rest is read and dropped)."""

    def __init__(self, stream, cap: int) -> None:
        self.buf = bytearray()
        self.truncated = False
        self._t = threading.Thread(target=self._pump, args=(stream, cap), daemon=True)
        self._t.start()

    def _pump(self, stream, cap: int) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := stream.read1(65536):
                room = cap - len(self.buf)
                if room > 0:
                    self.buf += chunk[:room]
                if len(chunk) > max(room, 0):
                    self.truncated = True

    def join(self, timeout: float = 2.0) -> bytes:
        self._t.join(timeout)
        return bytes(self.buf)


class BwrapSandbox(Sandbox):
    name = "bwrap"

    def __init__(
        self,
        *,
        ro_binds: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
        bwrap: str | None = None,
        use_cgroups: bool = True,
        tmp_size_mb: int = 64,
    ) -> None:
        """`ro_binds`: extra host paths made readable inside ({host: inside}); `env`: extra
        environment for every sandboxed process."""
        self.bwrap = bwrap or shutil.which("bwrap") or "/usr/bin/bwrap"
        if not os.path.exists(self.bwrap):
            raise SandboxError("bubblewrap not found: install the Debian package `bubblewrap`")
        self.prlimit = shutil.which("prlimit") or "/usr/bin/prlimit"
        self.ro_binds = dict(ro_binds or {})
        self.env = dict(env or {})
        self.use_cgroups = use_cgroups
        self.tmp_size_mb = tmp_size_mb
        self._services: dict[str, _Service] = {}

    # ---------------------------------------------------------------- command line
    def _mounts(self) -> list[str]:
        args: list[str] = ["--ro-bind", "/usr", "/usr"]
        for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
            p = Path("/") / top
            if p.is_symlink():
                args += ["--symlink", os.readlink(p), str(p)]
            elif p.is_dir():
                args += ["--ro-bind", str(p), str(p)]
        for etc in ("ld.so.cache", "alternatives", "localtime", "ssl"):  # no passwd, no shadow
            if (Path("/etc") / etc).exists():
                args += ["--ro-bind", f"/etc/{etc}", f"/etc/{etc}"]
        for root in python_roots():
            args += ["--ro-bind", root, root]
        for host, inside in self.ro_binds.items():
            args += ["--ro-bind", host, inside]
        return args

    def _argv(
        self,
        argv: list[str],
        limits: Limits,
        files_dir: str | None,
        env: dict[str, str],
        extra: list[str] | None = None,
        cpu_rlimit: bool = True,
    ) -> list[str]:
        if not argv:
            raise ValueError("empty argv")
        cmd = [
            self.bwrap,
            "--unshare-all",  # user, ipc, pid, net, uts, cgroup namespaces
            "--unshare-user",
            "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
            "--disable-userns",
            "--cap-drop", "ALL",
            "--die-with-parent",
            "--new-session",  # no controlling terminal: no TIOCSTI injection
            "--hostname", "sandbox",
            "--proc", "/proc",
            "--dev", "/dev",
            "--size", str(SHM_MB * 1024 * 1024), "--tmpfs", "/dev/shm",
            "--size", str(self.tmp_size_mb * 1024 * 1024), "--tmpfs", "/tmp",
            *self._mounts(),
        ]  # fmt: skip
        if files_dir:
            cmd += ["--ro-bind", files_dir, _INNER_DIR]
        cmd += list(extra or [])
        # last, once every mount point exists: the root and /dev (tmpfs that bwrap makes) are
        # read-only, so /tmp and /dev/shm, both capped, are all a sandbox can write
        cmd += ["--remount-ro", "/dev", "--remount-ro", "/"]
        cmd += ["--chdir", "/tmp", "--clearenv"]
        for k, v in sandbox_env(self.env, env).items():
            cmd += ["--setenv", k, v]
        rl = [
            f"--as={limits.memory_mb * 1024 * 1024}",
            f"--nproc={limits.max_procs}",  # only effective when not mapped to root; cgroup is
            "--core=0",
            "--nofile=256",
            f"--fsize={max(limits.max_output_bytes, 64 * 1024 * 1024)}",
        ]
        if cpu_rlimit:
            cpu = limits.cpu_s or int(limits.timeout_s) + 1
            rl.append(f"--cpu={cpu}:{cpu + 1}")  # soft: SIGXCPU (distinguishable), hard: SIGKILL
        cmd += ["--", self.prlimit, *rl, "--", *argv]
        return cmd

    def _write_files(self, files: dict[str, bytes] | None) -> str:
        # Owner-only on the host. Inside, uid 65534 maps to this process's uid, so the sandbox
        # (and nobody else on the host but root) can read them.
        # in the instance directory: swept if this process dies
        return write_files(files, "sbx-files-", root=str(instance_dir()), mode=0o400)

    def _cgroup(self, limits: Limits, cpu_quota: float | None = 1.0) -> CgroupLimits | None:
        if not self.use_cgroups:
            return None
        return CgroupLimits.create(
            pids=limits.max_procs, memory_bytes=limits.memory_mb * 1024 * 1024, cpu_quota=cpu_quota
        )

    def command(
        self, argv: list[str], *, limits: Limits, env: dict[str, str], extra: list[str]
    ) -> list[str]:
        """The bwrap command line for a long-running process that is not an HTTP service (the
        agent host): `extra` mounts, no files directory, no CPU-time rlimit."""
        return self._argv(argv, limits, None, env, extra=extra, cpu_rlimit=False)

    def cgroup(self, limits: Limits) -> CgroupLimits | None:
        """A cgroup for a long-running process (processes and memory capped, no CPU quota)."""
        return self._cgroup(limits, cpu_quota=None)

    # ---------------------------------------------------------------- run
    def _run_command(self, argv, files, stdin, limits, result_channel) -> RunResult:  # type: ignore[no-untyped-def]
        files_dir = self._write_files(files)
        cg = self._cgroup(limits)
        try:
            return self._run(argv, files_dir, stdin, limits, cg, result_channel)
        finally:
            if cg:
                cg.remove()
            shutil.rmtree(files_dir, ignore_errors=True)

    def _run(
        self,
        argv: list[str],
        files_dir: str,
        stdin: bytes | None,
        limits: Limits,
        cg: CgroupLimits | None,
        result_channel: bool = False,
    ) -> RunResult:
        # the result pipe's write end goes to the command alone: bwrap's init closes fds > 2
        channel = os.pipe() if result_channel else None
        env = {RESULT_FD_ENV: str(channel[1])} if channel else {}
        cmd, args_fd = options_via_fd(self._argv(argv, limits, files_dir, env))
        if cg:
            cg.open_join_fds()
        try:
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                preexec_fn=cg.preexec if cg else None,  # noqa: PLW1509 - only writes to an fd
                close_fds=True,
                pass_fds=(args_fd, channel[1]) if channel else (args_fd,),
                env=launcher_env(),
            )
        except OSError as e:
            if channel:
                os.close(channel[0])
            return RunResult(None, b"", b"", error=f"sandbox failed to start: {e}")
        finally:
            os.close(args_fd)
            if channel:
                os.close(channel[1])
            if cg:
                cg.close_fds()
        out = Capped(proc.stdout, limits.max_output_bytes)
        err = Capped(proc.stderr, limits.max_output_bytes)
        res = None
        if channel:  # the reader owns the read end (closed when it is dropped)
            res = Capped(open(channel[0], "rb"), limits.max_output_bytes)  # noqa: SIM115
        if stdin is not None:
            threading.Thread(target=feed, args=(proc.stdin, stdin), daemon=True).start()
        timed_out = False
        try:
            rc = proc.wait(timeout=limits.timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_tree(proc, cg)
            rc = proc.wait()
        if cg:
            cg.kill_all()  # stragglers that daemonised inside the group
        stdout, stderr = out.join(), err.join()
        result = res.join() if res else None
        truncated = out.truncated or err.truncated or bool(res and res.truncated)
        error = diagnose(rc, timed_out, stderr, cg, limits)
        if error is None and truncated:
            error = f"output limit: more than {limits.max_output_bytes} bytes (truncated)"
        return RunResult(
            returncode=None if timed_out else rc,
            stdout=stdout,
            stderr=stderr,
            timed_out=timed_out,
            output_truncated=truncated,
            error=error,
            result=result,
        )

    # ---------------------------------------------------------------- services
    def _start_service(self, argv, files, limits, env, forward_url) -> ServiceHandle:  # type: ignore[no-untyped-def]
        """Start `argv` with HARNESS_SERVICE_UDS set to a socket path it must listen on.

        `limits.timeout_s` bounds the start-up; there is no CPU-time rlimit on a service (it would
        accumulate across calls); the cgroup caps processes, memory and CPU share instead."""
        from interp_harness.function_store.service.forward import UnixToTcpForwarder

        limits = limits or Limits(timeout_s=20.0, memory_mb=2048)
        files_dir = self._write_files(files)
        # The orchestrator's socket is bound here, in a directory no sandbox sees, and only its
        # listening descriptor goes in: code inside cannot unlink, replace or chmod it.
        sock_dir = tempfile.mkdtemp(prefix="sbx-svc-", dir=instance_dir())
        host_sock = os.path.join(sock_dir, "service.sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(host_sock)
        listener.listen(128)
        svc_env = {
            **(env or {}),
            "HARNESS_SERVICE_FD": str(listener.fileno()),
            # no module from the writable working directory or a user site (HOME is /tmp)
            "PYTHONSAFEPATH": "1",
            "PYTHONNOUSERSITE": "1",
        }
        extra: list[str] = []
        forwarder = None
        if forward_url:
            # The backbone's socket: in its own directory, bound read-only (a Unix socket on a
            # read-only mount can be connected to, not unlinked or replaced).
            bb_dir = os.path.join(sock_dir, "backbone")
            os.mkdir(bb_dir, 0o755)
            forwarder = UnixToTcpForwarder(os.path.join(bb_dir, "backbone.sock"), forward_url)
            forwarder.start()
            svc_env["HARNESS_BACKBONE_UDS"] = f"{_SERVICE_DIR}/backbone.sock"
            svc_env["HARNESS_BACKBONE_URL"] = forward_url
            extra += ["--ro-bind", bb_dir, _SERVICE_DIR]
        extra += _service_code_binds(svc_env)
        cg = self._cgroup(limits, cpu_quota=None)
        cmd, args_fd = options_via_fd(
            self._argv(argv, limits, files_dir, svc_env, extra=extra, cpu_rlimit=False)
        )
        log_file = tempfile.TemporaryFile(prefix="sbx-svc-log-")
        if cg:
            cg.open_join_fds()
        try:
            # --die-with-parent uses PR_SET_PDEATHSIG, which fires when the spawning *thread*
            # ends: services are spawned from one long-lived thread, whoever asks for them.
            proc = (
                _spawner()
                .submit(
                    subprocess.Popen,
                    cmd,
                    stdin=subprocess.DEVNULL,
                    stdout=log_file,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=cg.preexec if cg else None,  # noqa: PLW1509
                    close_fds=True,
                    # bwrap's init closes descriptors above 2; the service keeps the listener
                    pass_fds=(args_fd, listener.fileno()),
                    env=launcher_env(),
                )
                .result()
            )
        finally:
            os.close(args_fd)
            listener.close()  # the service holds it now: if it dies, connecting fails at once
            if cg:
                cg.close_fds()
        svc = _Service(proc, cg, files_dir, sock_dir, log_file, forwarder)
        url = "http+unix://" + quote(host_sock, safe="")
        handle = ServiceHandle(
            url=url, backend=self.name, meta={"socket": host_sock, "pid": proc.pid}
        )
        self._services[url] = svc
        try:
            wait_healthy(host_sock, proc, limits.timeout_s)
        except SandboxError as e:
            tail = svc.log_tail()
            self.stop(handle)
            raise SandboxError(f"{e}; service output:\n{tail}") from None
        return handle

    def stop(self, handle: ServiceHandle) -> None:
        svc = self._services.pop(handle.url, None)
        if svc:
            svc.close()

    def service_log(self, handle: ServiceHandle) -> str:
        svc = self._services.get(handle.url)
        return svc.log_tail() if svc else ""


class _Service:
    def __init__(self, proc, cg, files_dir, sock_dir, log_file, forwarder) -> None:
        self.proc, self.cg, self.files_dir, self.sock_dir = proc, cg, files_dir, sock_dir
        self.log_file, self.forwarder = log_file, forwarder

    def log_tail(self, n: int = 4000) -> str:
        with contextlib.suppress(OSError, ValueError):
            self.log_file.seek(0, os.SEEK_END)
            size = self.log_file.tell()
            self.log_file.seek(max(0, size - n))
            return self.log_file.read().decode("utf-8", "replace")
        return ""

    def close(self) -> None:
        kill_tree(self.proc, self.cg)
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=5)
        if self.cg:
            self.cg.remove()
        if self.forwarder:
            self.forwarder.stop()
        self.log_file.close()
        shutil.rmtree(self.files_dir, ignore_errors=True)
        shutil.rmtree(self.sock_dir, ignore_errors=True)


_SPAWNER = None
_SPAWNER_LOCK = threading.Lock()


def _spawner():
    from concurrent.futures import ThreadPoolExecutor

    global _SPAWNER
    with _SPAWNER_LOCK:
        if _SPAWNER is None:
            _SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandbox-spawner")
        return _SPAWNER


def _service_code_binds(env: dict[str, str]) -> list[str]:
    """Services run our own `targets` part and the layers below it (`model_services`: the
    backbone and intervention clients; `agents`: the protocol module), and a plugin's runner the
    SDK, whose names load lazily from those parts: bind them read-only (they
    may be an editable checkout outside the Python prefix) and, when named, the reference-data
    directory (MLP weights). Never the orchestrator's state, never the rest of the package (no
    `orchestrator`, no `evaluator`)."""
    from interp_harness.harness.sandbox.code_binds import CODE_ROOT, part_binds

    args = part_binds(("function_store", "model_services", "agents", "sdk"))
    env["PYTHONPATH"] = CODE_ROOT
    data = env.get("HARNESS_DATA_DIR")
    if data and os.path.isdir(data):
        args += ["--ro-bind", os.path.realpath(data), data]
    return args


def options_via_fd(cmd: list[str]) -> tuple[list[str], int]:
    """`cmd` as `bwrap --args FD -- COMMAND...`, its options in a memfd. The sandbox's PID 1 is a
    fork of bwrap, so /proc/1/cmdline inside would otherwise show every host path and mount flag;
    what stays visible is the command (prlimit's limits and the in-sandbox argv)."""
    split = cmd.index("--")  # bwrap's own end of options (option values never equal "--")
    fd = os.memfd_create("bwrap-args", 0)  # no MFD_CLOEXEC: the child must inherit it
    os.write(fd, b"".join(a.encode() + b"\0" for a in cmd[1:split]))
    os.lseek(fd, 0, os.SEEK_SET)
    return [cmd[0], "--args", str(fd), *cmd[split:]], fd


def feed(pipe, data: bytes) -> None:
    with contextlib.suppress(OSError, ValueError):
        pipe.write(data)
    with contextlib.suppress(OSError, ValueError):
        pipe.close()


def kill_tree(proc: subprocess.Popen, cg: CgroupLimits | None) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # bwrap; its pid-namespace init takes the rest along
    if cg:
        cg.kill_all()


def diagnose(
    rc: int, timed_out: bool, stderr: bytes, cg: CgroupLimits | None, limits: Limits
) -> str | None:
    """Why a run failed, or None. Sandboxed code can write the sandbox's stderr (through
    /proc/1/fd/2): its text is consulted only for a run that did fail, as a hint."""
    sig = rc - 128 if rc > 128 else (-rc if rc < 0 else 0)
    if timed_out:
        return f"timeout: killed after {limits.timeout_s:g} s"
    if cg and cg.oom_killed():
        return f"memory limit: exceeded {limits.memory_mb} MB"
    if sig == signal.SIGXCPU or (sig == signal.SIGKILL and limits.cpu_s):
        return "cpu time limit exceeded"
    tail = stderr[-4000:]
    if rc != 0 and (b"MemoryError" in tail or b"Cannot allocate memory" in tail):
        return f"memory limit: exceeded {limits.memory_mb} MB"
    if cg and cg.pids_exhausted():
        return f"process limit: more than {limits.max_procs} processes"
    if rc != 0 and stderr.startswith(b"bwrap: "):
        return "sandbox failed to start: " + stderr.decode("utf-8", "replace").strip()[:500]
    if sig:
        return f"killed by signal {signal.Signals(sig).name if sig < 65 else sig}"
    return None


def wait_healthy(sock: str, proc: subprocess.Popen, timeout_s: float) -> None:
    import httpx

    deadline = time.monotonic() + timeout_s
    transport = httpx.HTTPTransport(uds=sock)
    with httpx.Client(transport=transport, base_url="http://sandbox", timeout=2.0) as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise SandboxError(f"service exited with status {proc.returncode} during start-up")
            if os.path.exists(sock):
                with contextlib.suppress(httpx.HTTPError):
                    if client.get("/healthz").status_code == 200:
                        return
            time.sleep(0.02)
    raise SandboxError(f"service did not answer /healthz within {timeout_s:g} s")
