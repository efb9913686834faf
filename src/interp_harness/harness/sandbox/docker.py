"""The Docker backend (docker SDK): the one compose uses, and the way to scale out.

Every container: the `target` image, read-only root, a size-capped tmpfs /tmp, uid 65534, all
capabilities dropped, no-new-privileges, memory / CPU / pids limits. `files` reach /sandbox through
a per-container volume filled before start (docker cannot copy into a read-only root or a tmpfs),
owner-only for uid 65534. Networking:
* `run`: no network at all (`network_mode="none"`).
* services, `channel="unix"` (default): no network at all either; the service listens on a Unix
  socket in a directory bind-mounted at /run/sandbox (on one host: a temp dir; under compose,
  point `socket_root` at a volume the orchestrator shares). Docker cannot pass a descriptor in,
  so the service creates the socket, and once it answers (before any target code can run) the
  orchestrator makes the directory read-only (0555, owned by the orchestrator's uid, which must
  not be 65534): target code cannot replace the socket. The service makes itself undumpable, so
  target code cannot reach its listening descriptor either. Verified here: an `internal` Docker
  network still gets a default route via the host's bridge address when dockerd runs with
  `--iptables=false`, so the host's own listening services would be reachable; `none` has no
  route at all.
* services, `channel="network"`: the internal bridge network `interp-harness-internal`; the
  orchestrator reaches the service at its address there (for scale-out across hosts). Isolation
  then relies on dockerd's iptables rules for internal networks.
* a neural-module service additionally joins `backbone_network` (internal) to reach the backbone.

A container's environment is the image's plus what the caller lists: Docker never passes the
orchestrator's. `run(result_channel=True)`: the program is the container's PID 1 (no `--init`)
and its stdout is the channel ($SANDBOX_RESULT_FD=1); nothing else in the container holds it, and
a program that makes itself undumpable (the scoring worker) keeps its children from opening
/proc/1/fd/1. Its `RunResult.stdout` is then empty.
"""

from __future__ import annotations

import contextlib
import io
import logging
import tarfile
import threading
import time
import uuid
from typing import Any

from interp_harness.harness.sandbox.base import (
    Limits,
    RunResult,
    Sandbox,
    SandboxError,
    ServiceHandle,
)
from interp_harness.harness.sandbox.bwrap import check_file_name
from interp_harness.harness.sandbox.env import RESULT_FD_ENV

log = logging.getLogger(__name__)

INTERNAL_NETWORK = "interp-harness-internal"
SERVICE_PORT = 8080
LABEL = "interp-harness.sandbox"


def _tar(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        dirs: set[str] = set()
        for name, data in files.items():
            parts = check_file_name(name).split("/")
            for i in range(1, len(parts)):
                d = "/".join(parts[:i])
                if d not in dirs:
                    dirs.add(d)
                    info = tarfile.TarInfo(d)
                    info.type, info.mode, info.uid, info.gid = tarfile.DIRTYPE, 0o700, 65534, 65534
                    tar.addfile(info)
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.uid, info.gid = len(data), 0o400, 65534, 65534
            info.mtime = int(time.time())
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def confined(image: str, memory_mb: int, max_procs: int, tmp: str) -> dict:
    """`containers.create` arguments every container of ours shares (target services, labs):
    read-only root with a private `/tmp` (`tmp`: its size and mount flags), uid 65534, no
    capabilities or privilege gain, memory without swap, a process cap and one CPU."""
    return {
        "image": image,
        "read_only": True,
        "tmpfs": {"/tmp": f"{tmp},mode=1777"},
        "user": "65534:65534",
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "mem_limit": f"{memory_mb}m",
        "memswap_limit": f"{memory_mb}m",
        "pids_limit": max_procs,
        "nano_cpus": 1_000_000_000,
        "working_dir": "/tmp",
    }


# The one place our containers are made and removed (this backend's and the lab's,
# harness/lab/docker_lab.py): create with a fresh volume, fill, remove; and how one died.
def create_container(
    client: Any, *, volume: str, volume_labels: dict[str, str], mount_at: str, **create: Any
) -> tuple[Any, Any]:
    """A container (created, not started; `create`: `containers.create` arguments, `confined`'s
    among them) with a fresh volume named `volume` bound at `mount_at`, where its files go
    before it starts. The volume is removed if the container cannot be created."""
    vol = client.volumes.create(name=volume, labels=volume_labels)
    try:
        c = client.containers.create(volumes={vol.name: {"bind": mount_at, "mode": "rw"}}, **create)
    except BaseException:
        with contextlib.suppress(Exception):
            vol.remove(force=True)
        raise
    return c, vol


def put_files(container: Any, volume: Any, at: str, tar: bytes) -> None:
    """Unpack `tar` at `at` in a container not yet started; on failure the container and its
    volume are removed."""
    try:
        container.put_archive(at, tar)
    except BaseException:
        remove_container(container, volume)
        raise


def remove_container(container: Any, volume: Any) -> None:
    """The container (killed if it runs) and its volume; what is already gone is no error."""
    with contextlib.suppress(Exception):
        container.remove(force=True)
    with contextlib.suppress(Exception):
        volume.remove(force=True)


def oom_killed(container: Any) -> bool:
    """Whether the kernel killed the container's process at its memory limit (one engine call)."""
    container.reload()
    return bool(container.attrs.get("State", {}).get("OOMKilled"))


class DockerSandbox(Sandbox):
    name = "docker"

    def __init__(
        self,
        *,
        client=None,
        image: str = "interp-harness/target:latest",
        network: str = INTERNAL_NETWORK,
        backbone_network: str | None = None,
        tmp_size_mb: int = 64,
        channel: str = "unix",
        socket_root: str | None = None,
    ) -> None:
        if channel not in ("unix", "network"):
            raise ValueError("channel must be 'unix' or 'network'")
        self.channel = channel
        self.socket_root = socket_root
        if client is None:
            import docker

            client = docker.from_env()
        self.client = client
        self.image = image
        self.network = network
        self.backbone_network = backbone_network
        self.tmp_size_mb = tmp_size_mb
        self._containers: dict[str, tuple[object, object, str | None]] = {}
        self._net_lock = threading.Lock()

    # ---------------------------------------------------------------- helpers
    def _common(self, limits: Limits) -> dict:
        return {
            **confined(self.image, limits.memory_mb, limits.max_procs, f"size={self.tmp_size_mb}m"),
            "labels": {LABEL: "1"},
        }

    def _internal_network(self, name: str):
        import docker

        with self._net_lock:
            try:
                return self.client.networks.get(name)
            except docker.errors.NotFound:
                return self.client.networks.create(
                    name, driver="bridge", internal=True, labels={LABEL: "1"}
                )

    def _create(self, argv, files, limits, **kw):
        c, vol = create_container(
            self.client, volume=f"sbx-{uuid.uuid4().hex[:12]}", volume_labels={LABEL: "1"},
            mount_at="/sandbox", command=argv, **self._common(limits), **kw,
        )  # fmt: skip
        if files:
            put_files(c, vol, "/sandbox", _tar(files))
        return c, vol

    # ---------------------------------------------------------------- run
    def _run_command(self, argv, files, stdin, limits, result_channel) -> RunResult:  # type: ignore[no-untyped-def]
        env = {RESULT_FD_ENV: "1"} if result_channel else {}
        c, vol = self._create(
            argv, files, limits, network_mode="none", stdin_open=stdin is not None,
            environment=env,
        )  # fmt: skip
        try:
            if stdin is not None:
                sock = c.attach_socket(params={"stdin": 1, "stream": 1})
                c.start()
                raw = getattr(sock, "_sock", sock)
                raw.sendall(stdin)
                with contextlib.suppress(OSError):
                    raw.shutdown(1)
                raw.close()
            else:
                c.start()
            timed_out = False
            try:
                rc = c.wait(timeout=limits.timeout_s)["StatusCode"]
            except Exception:  # requests' ReadTimeout / ConnectionError on timeout
                timed_out = True
                with contextlib.suppress(Exception):
                    c.kill()
                rc = None
            cap = limits.max_output_bytes
            out = c.logs(stdout=True, stderr=False) or b""
            err = c.logs(stdout=False, stderr=True) or b""
            truncated = len(out) > cap or len(err) > cap
            oom = oom_killed(c)
            error = None
            if timed_out:
                error = f"timeout: killed after {limits.timeout_s:g} s"
            elif oom or (rc == 137 and b"MemoryError" in err):
                error = f"memory limit: exceeded {limits.memory_mb} MB"
            elif truncated:
                error = f"output limit: more than {cap} bytes (truncated)"
            if result_channel:
                return RunResult(rc, b"", err[:cap], timed_out, truncated, error, out[:cap])
            return RunResult(rc, out[:cap], err[:cap], timed_out, truncated, error)
        finally:
            remove_container(c, vol)

    # ---------------------------------------------------------------- services
    def _start_service(self, argv, files, limits, env, forward_url) -> ServiceHandle:  # type: ignore[no-untyped-def]
        import os
        import shutil
        import tempfile
        from urllib.parse import quote

        from interp_harness.harness.sandbox.workdir import instance_dir

        limits = limits or Limits(timeout_s=30.0, memory_mb=2048)
        environment = {"HARNESS_SERVICE_PORT": str(SERVICE_PORT), **(env or {})}
        environment.pop("HARNESS_DATA_DIR", None)  # a host path; weights are not in the image
        if forward_url:
            environment["HARNESS_BACKBONE_URL"] = forward_url
        sock_dir = None
        kw: dict = {}
        if self.channel == "unix":
            sock_dir = tempfile.mkdtemp(
                prefix="sbx-docker-", dir=self.socket_root or instance_dir()
            )
            os.chmod(sock_dir, 0o777)  # uid 65534 inside creates the socket
            environment["HARNESS_SERVICE_UDS"] = "/run/sandbox/service.sock"
            from docker.types import Mount

            kw["mounts"] = [Mount("/run/sandbox", sock_dir, type="bind")]
            if forward_url and self.backbone_network:
                kw["network"] = self._internal_network(self.backbone_network).name
            else:
                kw["network_mode"] = "none"
        else:
            kw["network"] = self._internal_network(self.network).name
        try:
            c, vol = self._create(argv, files, limits, environment=environment, **kw)
        except Exception:
            if sock_dir:
                shutil.rmtree(sock_dir, ignore_errors=True)
            raise
        if self.channel == "network" and forward_url and self.backbone_network:
            self._internal_network(self.backbone_network).connect(c)
        c.start()
        c.reload()
        if sock_dir:
            url = "http+unix://" + quote(os.path.join(sock_dir, "service.sock"), safe="")
            meta = {"container": c.id, "socket": os.path.join(sock_dir, "service.sock")}
        else:
            ip = c.attrs["NetworkSettings"]["Networks"][self.network]["IPAddress"]
            url, meta = f"http://{ip}:{SERVICE_PORT}", {"container": c.id, "ip": ip}
        handle = ServiceHandle(url=url, backend=self.name, meta=meta)
        self._containers[url] = (c, vol, sock_dir)
        try:
            self._wait_healthy(c, url, limits.timeout_s)
        except SandboxError:
            self.stop(handle)
            raise
        if sock_dir:
            # The service has made its socket; no target code has run yet (calls come after
            # this returns). From now on uid 65534 inside cannot unlink, rename or add entries
            # there: target code cannot put its own socket in the service's place.
            os.chmod(sock_dir, 0o555)
        return handle

    def _wait_healthy(self, c, url: str, timeout_s: float) -> None:
        import httpx

        from interp_harness.function_store.service.client import transport_for

        base, transport = transport_for(url, sync=True)
        client = httpx.Client(base_url=base, transport=transport, timeout=1.0)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if client.get("/healthz").status_code == 200:
                    client.close()
                    return
            c.reload()
            if c.status in ("exited", "dead"):
                tail = c.logs(tail=30).decode("utf-8", "replace")
                raise SandboxError(f"target container exited during start-up:\n{tail}")
            time.sleep(0.05)
        client.close()
        raise SandboxError(f"target container did not answer /healthz within {timeout_s:g} s")

    def stop(self, handle: ServiceHandle) -> None:
        import os
        import shutil

        entry = self._containers.pop(handle.url, None)
        if entry:
            c, vol, sock_dir = entry
            remove_container(c, vol)
            if sock_dir:
                with contextlib.suppress(OSError):
                    os.chmod(sock_dir, 0o700)  # read-only since start-up
                shutil.rmtree(sock_dir, ignore_errors=True)

    def service_log(self, handle: ServiceHandle) -> str:
        entry = self._containers.get(handle.url)
        return entry[0].logs(tail=50).decode("utf-8", "replace") if entry else ""
