"""In-sandbox worker: runs a batch of agent-written functions, one child process per answer.

This file is shipped into the sandbox as a standalone script (stdlib, plus numpy/scipy when the
sandbox has them); it must not import the project. Protocol:

stdin: one JSON object
    {"limits": {"cpu_s", "wall_s", "memory_mb", "output_bytes", "result_bytes", "parallel"},
     "answers": [{"id", "code", "func_name", "kind": "number"|"text",
                  "call": "direct"|"find-compat", "inputs": [...]}]}
results, on the descriptor named by $SANDBOX_RESULT_FD (never stdout): JSON lines, {"start": id}
when an answer's child starts, then one record per answer, in completion order
    {"id", "status": "ok"|"error", "reason", "results": [{"v": ...} | {"err": "..."}],
     "printed_bytes", "guard": "..."}

Nothing agent code can reach may carry those records. The sandbox's stdout and stderr can't: the
sandbox's init holds them, and any process inside can open them through /proc/1/fd (they are
untrusted text to the orchestrator). The result descriptor is held by this worker alone (bwrap's
init closes descriptors above 2): the worker makes itself undumpable before it reads its input, so
no process of its uid without CAP_SYS_PTRACE can open /proc/<worker>/fd/*, and children close the
descriptor before agent code runs. Children inherit undumpability, so siblings (parallel > 1)
cannot open each other's result pipes either.

Each answer runs in its own forked child, which before touching agent code: starts a new session,
drops capabilities, installs a seccomp filter (no fork/clone/exec, no sockets, no ptrace, no
signals to other processes), and sets rlimits (address space, CPU seconds, file size for its
captured stdout/stderr, open files). The parent enforces a wall-clock deadline and a cap on the
result bytes, and kills the child's process group when either is exceeded. One bad answer
therefore ends as one error line; the batch goes on. The whole batch runs inside one sandbox
(bwrap: no network, read-only system, private /tmp), which is the outer wall.
"""

from __future__ import annotations

import builtins
import ctypes
import json
import math
import os
import resource
import select
import signal
import struct
import sys
import tempfile
import time

RESULT_FD_ENV = "SANDBOX_RESULT_FD"  # interp_harness.harness.sandbox.env.RESULT_FD_ENV (no project imports here)


def undumpable() -> None:
    """PR_SET_DUMPABLE 0, or exit: without it, agent code could write this worker's records."""
    if ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE = 4
        sys.stderr.write(f"scoring worker: prctl(PR_SET_DUMPABLE) failed: {ctypes.get_errno()}\n")
        sys.exit(2)


if __name__ == "__main__":  # before anything else runs (not when a test imports this file)
    undumpable()

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # no helper threads: children may not clone
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

try:  # preloaded once per batch so that children share it (agent code nearly always uses numpy)
    import numpy as np
except Exception:  # pragma: no cover - sandbox without numpy
    np = None

STR_CAP = 100_000  # longest string value sent back per input
REPR_CAP = 200

# --- seccomp -------------------------------------------------------------------------------

_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
# Syscalls refused with EPERM in the child. Audited against the kernel's process, signal, pidfd,
# namespace and memory-of-other-processes families: anything that can reach another process
# (the worker above all: killing it would turn this answer into an "infrastructure" error that
# dodges its score) or widen the child's view is refused.
_DENY = {
    "x86_64": {
        "fork": 57,
        "vfork": 58,
        "clone": 56,
        "clone3": 435,
        "execve": 59,
        "execveat": 322,
        "socket": 41,
        "socketpair": 53,
        "ptrace": 101,
        "process_vm_writev": 311,
        "process_vm_readv": 310,
        "process_madvise": 440,
        "pidfd_open": 434,
        "pidfd_send_signal": 424,
        "pidfd_getfd": 438,
        "rt_sigqueueinfo": 129,
        "rt_tgsigqueueinfo": 297,
        "kcmp": 312,
        "migrate_pages": 256,
        "move_pages": 279,
        "setns": 308,
        "setsid": 112,
        "setpgid": 109,
        "unshare": 272,
        "mount": 165,
        "perf_event_open": 298,
        "bpf": 321,
        "userfaultfd": 323,
        "keyctl": 250,
        "add_key": 248,
        "request_key": 249,
    },
    "aarch64": {
        "clone": 220,
        "clone3": 435,
        "execve": 221,
        "execveat": 281,
        "socket": 198,
        "socketpair": 199,
        "ptrace": 117,
        "process_vm_writev": 271,
        "process_vm_readv": 270,
        "process_madvise": 440,
        "pidfd_open": 434,
        "pidfd_send_signal": 424,
        "pidfd_getfd": 438,
        "rt_sigqueueinfo": 138,
        "rt_tgsigqueueinfo": 240,
        "kcmp": 272,
        "migrate_pages": 238,
        "move_pages": 239,
        "setns": 268,
        "setsid": 157,
        "setpgid": 154,
        "unshare": 97,
        "mount": 40,
        "perf_event_open": 241,
        "bpf": 280,
        "userfaultfd": 282,
        "keyctl": 219,
        "add_key": 217,
        "request_key": 218,
    },
}
# Syscalls whose first argument is a pid: allowed only for the child itself (or 0: itself / its
# own group). prlimit64 on another process could set the worker's CPU limit to 0.
_SELF_ONLY = {
    "x86_64": {"kill": 62, "tkill": 200, "tgkill": 234, "prlimit64": 302},
    "aarch64": {"kill": 129, "tkill": 130, "tgkill": 131, "prlimit64": 261},
}
# fcntl/ioctl commands that make the kernel signal another process on I/O (F_SETOWN, F_SETSIG,
# F_SETOWN_EX; FIOSETOWN, SIOCSPGRP): refused.
_FCNTL = {"x86_64": 72, "aarch64": 25}
_IOCTL = {"x86_64": 16, "aarch64": 29}
_FCNTL_DENY = (8, 10, 15)
_IOCTL_DENY = (0x8901, 0x8902)


def _bpf(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k & 0xFFFFFFFF)


def install_seccomp(own_pid: int) -> str:
    """Install the child's syscall filter. Returns a short status ("seccomp" or why not)."""
    arch = os.uname().machine
    if arch not in _AUDIT_ARCH or not sys.platform.startswith("linux"):
        return f"no seccomp on {arch}"
    LD_W_ABS, JEQ, JGE, RET = 0x20, 0x15, 0x35, 0x06
    ALLOW, KILL_PROC = 0x7FFF0000, 0x80000000
    EPERM = 0x00050000 | 1
    prog: list[bytes] = [
        _bpf(LD_W_ABS, 0, 0, 4),
        _bpf(JEQ, 1, 0, _AUDIT_ARCH[arch]),
        _bpf(RET, 0, 0, KILL_PROC),
    ]
    prog.append(_bpf(LD_W_ABS, 0, 0, 0))  # syscall number
    if arch == "x86_64":
        prog += [_bpf(JGE, 0, 1, 0x40000000), _bpf(RET, 0, 0, EPERM)]  # x32 ABI
    for nr in _DENY[arch].values():
        prog += [_bpf(JEQ, 0, 1, nr), _bpf(RET, 0, 0, EPERM)]
    for nr in _SELF_ONLY[arch].values():
        # if nr matches: load args[0] (low word), allow iff == own pid (or 0: itself)
        prog += [
            _bpf(JEQ, 0, 5, nr),
            _bpf(LD_W_ABS, 0, 0, 16),
            _bpf(JEQ, 2, 0, own_pid),
            _bpf(JEQ, 1, 0, 0),
            _bpf(RET, 0, 0, EPERM),
            _bpf(RET, 0, 0, ALLOW),
        ]
        prog.append(_bpf(LD_W_ABS, 0, 0, 0))  # reload syscall number for the next test
    for nr, cmds in ((_FCNTL[arch], _FCNTL_DENY), (_IOCTL[arch], _IOCTL_DENY)):
        # if nr matches: load args[1] (low word, the command), refuse the listed ones
        n = len(cmds)
        prog += [_bpf(JEQ, 0, n + 3, nr), _bpf(LD_W_ABS, 0, 0, 24)]
        prog += [_bpf(JEQ, n - i, 0, c) for i, c in enumerate(cmds)]
        prog += [_bpf(RET, 0, 0, ALLOW), _bpf(RET, 0, 0, EPERM)]
        prog.append(_bpf(LD_W_ABS, 0, 0, 0))
    prog.append(_bpf(RET, 0, 0, ALLOW))
    raw = b"".join(prog)
    buf = ctypes.create_string_buffer(raw)

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(len(prog), ctypes.addressof(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return f"no_new_privs failed: errno {ctypes.get_errno()}"
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return f"seccomp failed: errno {ctypes.get_errno()}"
    return "seccomp"


def drop_capabilities() -> None:
    """Clear all capabilities (matters when the sandbox runs as root in its namespace)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        header = (ctypes.c_uint32 * 2)(0x20080522, 0)
        data = (ctypes.c_uint32 * 6)()
        libc.capset(header, data)
    except Exception:
        pass


# --- encoding values -------------------------------------------------------------------------


def _safe_repr(v: object) -> str:
    try:
        return repr(v)[:REPR_CAP]
    except Exception as e:  # a hostile __repr__
        return f"<unrepresentable {type(v).__name__}: {type(e).__name__}>"


def encode_numeric(v: object) -> dict:
    if v is None or isinstance(v, (str, bytes)):
        return {"err": f"returned a non-numeric value: {_safe_repr(v)}"}
    if np is not None and isinstance(v, np.ndarray):
        if v.size != 1:
            return {"err": f"returned an array of shape {v.shape}, expected a scalar"}
        v = v.reshape(()).item()
    try:
        c = complex(v)
    except Exception:
        return {"err": f"returned a non-numeric value of type {type(v).__name__}"}
    return {"v": [c.real, c.imag]}


def encode_string(v: object) -> dict:
    if type(v) is str:
        if len(v) > STR_CAP:
            return {"v": v[:STR_CAP], "truncated": True}
        return {"v": v}
    return {"nonstr": type(v).__name__, "repr": _safe_repr(v)}


def _fmt_exc(e: BaseException) -> str:
    msg = str(e)
    return f"{type(e).__name__}: {msg[:300]}" if msg else type(e).__name__


# --- the child ------------------------------------------------------------------------------


def child_main(ans: dict, lim: dict, wfd: int, capture_path: str) -> None:
    """Runs in the forked child. Never returns."""
    code = 0
    try:
        os.setsid()
        cap = os.open(capture_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(cap, 1)
        os.dup2(cap, 2)
        _close_all_but(wfd)
        as_now = _vm_size()
        mem = as_now + int(lim["memory_mb"]) * 2**20
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        if hard != resource.RLIM_INFINITY:
            mem = min(mem, hard)  # the sandbox-wide cap stays the outer bound
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        cpu = max(1, int(math.ceil(lim["cpu_s"])))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        # one byte over the cap, so that the parent tells "printed exactly the cap" from "over it"
        fsize = int(lim["output_bytes"]) + 1
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
        try:
            resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
        except (ValueError, OSError):
            pass
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        drop_capabilities()
        guard = install_seccomp(os.getpid())
        _send(wfd, {"guard": guard})
        _run_answer(ans, wfd)
    except BaseException as e:  # noqa: BLE001 - report anything, then exit
        try:
            _send(wfd, {"fatal": _fmt_exc(e)})
        except BaseException:
            code = 3
    _flush_output()
    os._exit(code)


def _flush_output() -> None:
    """Write out what the answer printed and Python still buffers: `os._exit` skips it, and the
    score's `printed_bytes` is the size of the capture file. Agent code may have replaced
    sys.stdout, so the original streams are flushed too; a write over the cap fails (EFBIG,
    Python ignores SIGXFSZ) and is counted as capped by the parent."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - a closed, capped or hostile stream: nothing to add
            pass


def _close_all_but(wfd: int) -> None:
    """Close every descriptor above 2 except this child's own pipe: the worker's result channel
    above all, whatever its number (it comes from the orchestrator, and may be above 1024)."""
    try:
        fds = [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:
        fds = list(range(3, 65536))
    for fd in fds:
        if fd > 2 and fd != wfd:
            try:
                os.close(fd)
            except OSError:
                pass
    for fd in fds:  # fail closed: the child must not start with the result channel open
        if fd > 2 and fd != wfd and _is_open(fd):
            raise RuntimeError(f"descriptor {fd} could not be closed")


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


def _vm_size() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 256 * 2**20


def _send(wfd: int, obj: dict) -> None:
    data = (json.dumps(obj) + "\n").encode()
    while data:
        n = os.write(wfd, data)
        data = data[n:]


def _run_answer(ans: dict, wfd: int) -> None:
    ns: dict = {"__name__": "agent_code", "__builtins__": builtins}
    try:
        exec(compile(ans["code"], "<agent code>", "exec"), ns)
    except BaseException as e:  # noqa: BLE001
        _send(wfd, {"load_error": _fmt_exc(e)})
        return
    name = ans.get("func_name")
    fn = ns.get(name) if name else None
    if not callable(fn):
        _send(wfd, {"load_error": f"no function named {name!r} in the code"})
        return
    encode = encode_numeric if ans["kind"] == "number" else encode_string
    compat = ans.get("call") == "find-compat"
    for x in ans["inputs"]:
        try:
            if ans["kind"] == "number":
                arg = float(x)
                out = eval(f"{name}({arg!r})", ns) if compat else fn(arg)
            elif compat:
                # FIND pastes the input between single quotes, unescaped (`string_indicator.py`)
                out = eval(f"{name}('{x}')", ns)
            else:
                out = fn(str(x))
            res = encode(out)
        except BaseException as e:  # noqa: BLE001 - SystemExit, KeyboardInterrupt included
            if isinstance(e, MemoryError):
                res = {"err": "MemoryError: memory limit exceeded"}
            else:
                res = {"err": _fmt_exc(e)}
        _send(wfd, {"r": res})


# --- the parent -----------------------------------------------------------------------------


class Child:
    def __init__(self, ans: dict, pid: int, rfd: int, capture: str, deadline: float) -> None:
        self.ans, self.pid, self.rfd, self.capture, self.deadline = ans, pid, rfd, capture, deadline
        self.buf = bytearray()
        self.killed_reason: str | None = None


def spawn(ans: dict, lim: dict, tmpdir: str) -> Child:
    capture = os.path.join(tmpdir, f"out-{os.getpid()}-{time.monotonic_ns()}")
    rfd, wfd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        child_main(ans, lim, wfd, capture)
    os.close(wfd)
    return Child(ans, pid, rfd, capture, time.monotonic() + float(lim["wall_s"]))


def _kill(child: Child) -> None:
    for target in (-child.pid, child.pid):
        try:
            os.kill(target, signal.SIGKILL)
        except OSError:
            pass


_TEXT_KEYS = ("guard", "load_error", "fatal")


def _read_record(line: bytes, kind: str) -> dict | None:
    """One record from a child's pipe, or None when it is not exactly what `child_main` writes.

    Bounded: the pipe holds at most `result_bytes`, and deep nesting ends as RecursionError
    (caught) instead of taking the worker down with the rest of the batch."""
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(msg, dict) or len(msg) != 1:
        return None
    ((key, value),) = msg.items()
    if key in _TEXT_KEYS:
        return msg if isinstance(value, str) else None
    if key != "r" or not isinstance(value, dict):
        return None
    return msg if _valid_result(value, kind) else None


def _valid_result(r: dict, kind: str) -> bool:
    keys = set(r)
    if keys == {"err"}:
        return isinstance(r["err"], str)
    if kind == "number":
        v = r.get("v")
        return (
            keys == {"v"}
            and isinstance(v, list)
            and len(v) == 2
            and all(type(x) in (int, float) for x in v)
        )
    if keys in ({"v"}, {"v", "truncated"}):
        return isinstance(r["v"], str) and r.get("truncated", True) is True
    return keys == {"nonstr", "repr"} and all(isinstance(r[k], str) for k in keys)


def finish(child: Child, lim: dict) -> dict:
    os.close(child.rfd)
    _, status = os.waitpid(child.pid, 0)
    cap = int(lim["output_bytes"])
    try:
        written = os.path.getsize(child.capture)  # at most cap + 1 (the child's RLIMIT_FSIZE)
        os.unlink(child.capture)
    except OSError:
        written = 0
    printed = min(written, cap)
    results: list[dict] = []
    guard, load_error, fatal, invalid = None, None, None, None
    for line in bytes(child.buf).split(b"\n"):
        if not line:
            continue
        msg = _read_record(line, child.ans["kind"])
        if msg is None:
            # Our own child writes only well-formed records; anything else on the pipe came from
            # the agent's code. Keep the first such problem as the answer's failure.
            invalid = invalid or "invalid record on the result pipe (written by the agent's code)"
            continue
        if "r" in msg:
            results.append(msg["r"])
        elif "guard" in msg:
            guard = msg["guard"]
        elif "load_error" in msg:
            load_error = msg["load_error"]
        elif "fatal" in msg:
            fatal = msg["fatal"]
    if len(results) > len(child.ans["inputs"]):
        invalid = invalid or "more results than inputs on the result pipe"
    reason = child.killed_reason or invalid or load_error or fatal
    if reason is None and os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        reason = {
            signal.SIGXCPU: "cpu time limit exceeded",
            signal.SIGKILL: "killed (cpu time or memory limit)",
            signal.SIGSYS: "forbidden system call",
            signal.SIGXFSZ: "output limit exceeded",
            signal.SIGSEGV: "segmentation fault",
        }.get(sig, f"killed by signal {sig}")
    if reason is None and len(results) < len(child.ans["inputs"]):
        reason = (
            f"exited early (status {os.WEXITSTATUS(status) if os.WIFEXITED(status) else status})"
        )
    return {
        "id": child.ans["id"],
        "status": "error" if reason else "ok",
        "reason": reason,
        "results": results,
        "printed_bytes": printed,
        "output_capped": written > cap,
        "guard": guard,
    }


def run_batch(batch: dict, out) -> None:
    lim = {
        "cpu_s": 5,
        "wall_s": 10,
        "memory_mb": 256,
        "output_bytes": 65536,
        "result_bytes": 4_000_000,
        "parallel": 1,
    }
    lim.update(batch.get("limits") or {})
    tmpdir = tempfile.mkdtemp(prefix="agent-out-")
    queue = list(batch.get("answers") or [])
    queue.reverse()
    active: dict[int, Child] = {}
    parallel = max(1, int(lim["parallel"]))
    while queue or active:
        while queue and len(active) < parallel:
            ans = queue.pop()
            _emit(out, {"start": ans["id"]})  # which answer was running if the worker dies
            ch = spawn(ans, lim, tmpdir)
            active[ch.rfd] = ch
        now = time.monotonic()
        timeout = max(0.0, min(c.deadline for c in active.values()) - now)
        ready, _, _ = select.select(list(active), [], [], timeout)
        for fd in ready:
            ch = active[fd]
            data = os.read(fd, 65536)
            if data:
                ch.buf += data
                if len(ch.buf) > int(lim["result_bytes"]):
                    ch.killed_reason = "result size limit exceeded"
                    _kill(ch)
                    del active[fd]
                    _emit(out, finish(ch, lim))
                continue
            del active[fd]
            _emit(out, finish(ch, lim))
        now = time.monotonic()
        for fd, ch in list(active.items()):
            if now >= ch.deadline:
                ch.killed_reason = f"wall-clock limit exceeded ({lim['wall_s']} s)"
                _kill(ch)
                del active[fd]
                _emit(out, finish(ch, lim))


def _emit(out, record: dict) -> None:
    out.write(json.dumps(record) + "\n")
    out.flush()


def preload_scipy(answers: list) -> None:
    """FIND's function files import scipy.signal and scipy.special, and a child importing them
    itself pays ~1 s; so does this worker, which is started once per episode's answers and whose
    answers rarely use scipy (~20 CPU-s of a 10-target numeric run). Preloaded only when some
    answer's code names scipy (a child reaching it another way still gets it, just slower)."""
    if any("scipy" in str(a.get("code", "")) for a in answers if isinstance(a, dict)):
        try:
            import scipy.signal  # noqa: F401
            import scipy.special  # noqa: F401
        except Exception:
            pass


def result_channel():  # type: ignore[no-untyped-def]
    """The orchestrator's result descriptor, as a text stream; exits when there is none (the
    records never go to stdout, which any process in the sandbox can write)."""
    fd = os.environ.pop(RESULT_FD_ENV, "")
    try:
        return os.fdopen(int(fd), "w", encoding="utf-8")
    except (ValueError, OSError) as e:
        sys.stderr.write(f"scoring worker: no result channel (${RESULT_FD_ENV}={fd!r}): {e}\n")
        sys.exit(2)


def main() -> None:
    out = result_channel()
    batch = json.loads(sys.stdin.buffer.read() or b"{}")
    answers = batch.get("answers") if isinstance(batch, dict) else None
    preload_scipy(answers if isinstance(answers, list) else [])
    run_batch(batch, out)


if __name__ == "__main__":
    main()
