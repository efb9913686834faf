"""The lab under Docker (HARNESS_LAB_SANDBOX=docker, or HARNESS_SANDBOX=docker): one container
per lab, from a locally built image. `DockerLabSandbox` is the registry's `lab-docker` (a
`Sandbox` that offers sessions); its containers are made, limited and removed by the same code
as the Docker backend's (harness/sandbox/docker.py: `confined`, `create_container`, `put_files`,
`remove_container`).

The image (`sandbox_images/lab/Dockerfile`, tagged by a digest of the Dockerfile and the pinned
requirements) holds Python and HARNESS_LAB_PACKAGES with what they require, pinned to the
versions this Python has, so that a cell sees the same libraries under either backend. It is
built FROM the debootstrap base image (harness/sandbox/docker_engine.py) from a local wheelhouse,
with no network, once per package list.

Each lab: a fresh volume at /opt/lab holding the kernel and the generated `target` (root-owned,
read-only to the lab's user; docker cannot copy into a read-only mount, so the volume is writable
to root only), no network, read-only root, a size-capped tmpfs /tmp, uid 65534, every capability
dropped, no-new-privileges, `--init` as PID 1, and the LabLimits' memory (no swap), processes and
one CPU. Its environment is the one sandbox_env builds, nothing of ours. The channel is the
container's stdin and stdout through `docker start --attach --interactive`.

The watchdog reads the lab's CPU time in /proc: the engine must run on this machine, in our PID
namespace (the container's first process is checked to be in the container's cgroup).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import io
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import uuid
from importlib import metadata
from pathlib import Path
from typing import IO, Any, ClassVar

from interp_harness.harness.lab import frames
from interp_harness.harness.lab.sandbox import LAB_DIR, LAB_ENV
from interp_harness.harness.sandbox.base import Limits, Sandbox, SandboxError
from interp_harness.harness.sandbox.docker import (
    confined,
    create_container,
    oom_killed,
    put_files,
    remove_container,
)
from interp_harness.harness.sandbox.env import launcher_env, sandbox_env
from interp_harness.harness.sandbox.session import Session, tree_cpu_s
from interp_harness.harness.sandbox.spawn import spawn

LAB_REPO = "interp-harness/lab"
LABEL = "interp-harness.lab"
OWNER_LABEL = "interp-harness.lab.owner"  # which process started a lab (not seen inside)
DOCKERFILE = Path(__file__).resolve().parents[4] / "sandbox_images/lab/Dockerfile"
_PATH = "/usr/local/bin:/usr/bin:/bin"  # the image's Python, not ours


class DockerLabError(SandboxError):
    """No Docker lab can be started here (engine, image or docker CLI)."""


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.lru_cache(maxsize=8)
def pinned_requirements(packages: tuple[str, ...]) -> tuple[str, ...]:
    """`name==version` of `packages` and every distribution they require, as installed here."""
    from packaging.requirements import Requirement

    todo, pins = list(packages), {}
    while todo:
        name = todo.pop()
        if _key(name) in pins:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise DockerLabError(
                f"HARNESS_LAB_PACKAGES names {name!r}, which is not installed for this Python"
            ) from None
        pins[_key(name)] = f"{_key(dist.metadata['Name'])}=={dist.version}"
        for r in dist.requires or ():
            req = Requirement(r)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return tuple(sorted(pins.values()))


def image_tag(requirements: tuple[str, ...], base_image: str) -> str:
    h = hashlib.sha256(DOCKERFILE.read_bytes())
    h.update("\n".join((base_image, *requirements)).encode())
    return f"{LAB_REPO}:{h.hexdigest()[:12]}"


def _wheelhouse(dest: Path, requirements: tuple[str, ...]) -> None:
    dest.mkdir(parents=True)
    (dest / "requirements.txt").write_text("\n".join(requirements) + "\n")
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    # the base image is Debian bookworm's CPython 3.11 on x86-64 (docker_engine.ensure_base_image)
    _run([*pip, "download", "--only-binary=:all:", "--python-version", "3.11",
                    "--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_17_x86_64",
                    "--platform", "manylinux_2_28_x86_64", "--implementation", "cp",
                    "-d", str(dest), "pip", "-r", str(dest / "requirements.txt")])  # fmt: skip
    next(dest.glob("pip-*.whl")).rename(dest / "pip.whl")


def _run(argv: list[str]) -> None:
    p = subprocess.run(argv, capture_output=True)
    if p.returncode != 0:
        raise DockerLabError(
            f"{' '.join(argv[:4])} ... failed: {p.stderr.decode('utf-8', 'replace')[-1500:]}"
        )


_build_lock = threading.Lock()


def ensure_lab_image(client: Any, packages: tuple[str, ...]) -> str:
    """The lab image for `packages` (built once, then found by its tag)."""
    import docker

    from interp_harness.harness.sandbox.docker_engine import (
        EngineUnavailable,
        ensure_base_image,
    )

    requirements = pinned_requirements(packages)
    with _build_lock:  # one build per process; a second caller then finds the tag
        try:
            base = ensure_base_image(client)
        except EngineUnavailable as e:
            raise DockerLabError(str(e)) from e
        tag = image_tag(requirements, base)
        try:
            client.images.get(tag)
            return tag
        except docker.errors.ImageNotFound:
            pass
        with tempfile.TemporaryDirectory(prefix="lab-image-") as ctx:
            _wheelhouse(Path(ctx) / "wheels", requirements)
            shutil.copy(DOCKERFILE, Path(ctx) / "Dockerfile")
            try:
                client.images.build(
                    path=ctx, tag=tag, buildargs={"BASE_IMAGE": base},
                    network_mode="none", rm=True, forcerm=True, labels={LABEL: "image"},
                )  # fmt: skip
            except docker.errors.DockerException as e:
                raise DockerLabError(f"the lab image did not build: {e}") from e
    return tag


def engine() -> tuple[Any, str]:
    """A client of the engine and the Unix socket it answers on (the docker CLI's DOCKER_HOST)."""
    from interp_harness.harness.sandbox.docker_engine import EngineUnavailable, ensure_engine

    try:
        client = ensure_engine()
    except EngineUnavailable as e:
        raise DockerLabError(str(e)) from e
    path = getattr(client.api.get_adapter(client.api.base_url), "socket_path", None)
    if not path:
        raise DockerLabError(
            "the Docker lab needs the engine on this machine, on a Unix socket "
            f"(it answers at {client.api.base_url})"
        )
    return client, f"unix://{path}"


def owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def files_tar(files: dict[str, bytes]) -> bytes:
    """`files` at the top of /opt/lab: owned by root, readable by all, writable by none."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o444, int(time.time())
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def container_options(
    image: str, limits: Limits, tmp_mb: int, main: str = "kernel.py"
) -> dict[str, Any]:
    """The docker SDK's `containers.create` arguments of one lab (its volume aside)."""
    env = sandbox_env(LAB_ENV)
    env["PATH"] = _PATH
    tmp = f"size={max(tmp_mb, 1)}m,nosuid,nodev"
    return {
        **confined(image, limits.memory_mb, limits.max_procs, tmp),
        "command": ["python3", "-I", f"{LAB_DIR}/{main}"],
        "stdin_open": True,  # the channel: attached by `docker start -ai`
        "init": True,
        "network_mode": "none",
        "ulimits": [{"Name": "nofile", "Soft": 1024, "Hard": 1024}],
        "environment": env,
        "hostname": "lab",
        "labels": {LABEL: "lab", OWNER_LABEL: owner()},
        "name": f"lab-{uuid.uuid4().hex[:16]}",
    }


class DockerJail:
    """One lab's container and volume, the docker CLI process that holds its channel, and what
    the watchdog needs of them."""

    def __init__(
        self, client: Any, container: Any, volume: Any, socket_url: str, limits: Limits
    ) -> None:
        self.client, self.container, self.volume = client, container, volume
        self.socket_url, self.limits = socket_url, limits
        self.proc: asyncio.subprocess.Process | None = None  # the CLI (`attach_command`)
        self.pid: int | None = None  # the container's first process, in our /proc

    @classmethod
    def create(
        cls,
        files: dict[str, bytes],
        limits: Limits,
        tmp_mb: int,
        packages: tuple[str, ...],
        main: str = "kernel.py",
    ) -> DockerJail:
        """Blocking (engine calls, maybe the image's first build): call it in a thread."""
        import docker

        client, socket_url = engine()
        image = ensure_lab_image(client, packages)
        try:
            c, vol = create_container(
                client,
                volume=f"lab-{uuid.uuid4().hex[:16]}",
                volume_labels={LABEL: "lab"},
                mount_at=LAB_DIR,
                **container_options(image, limits, tmp_mb, main),
            )
        except docker.errors.DockerException as e:
            raise DockerLabError(f"the lab's container was not created: {e}") from e
        try:
            put_files(c, vol, LAB_DIR, files_tar(files))
        except docker.errors.DockerException as e:
            raise DockerLabError(f"the lab's files were not copied in: {e}") from e
        return cls(client, c, vol, socket_url, limits)

    def attach_command(self) -> tuple[list[str], dict[str, str]]:
        """The docker CLI command that starts the container with our pipes as its stdin and
        stdout (stderr: the lab's log), and the CLI's environment: no operator variables (the
        CLI's own environment never enters the container either)."""
        cli = shutil.which("docker")
        if cli is None:
            raise DockerLabError("the Docker lab needs the `docker` command-line client")
        env = {**launcher_env(), "DOCKER_HOST": self.socket_url, "DOCKER_CONFIG": "/nonexistent"}
        return [cli, "start", "--attach", "--interactive", self.container.id], env

    def find_pid(self) -> None:
        """Once the lab runs: its first process's pid in our /proc, checked to be the container's
        (DockerLabError when the engine runs elsewhere or in another PID namespace)."""
        self.container.reload()
        pid = int(self.container.attrs["State"].get("Pid") or 0)
        try:
            groups = Path(f"/proc/{pid}/cgroup").read_text() if pid > 0 else ""
        except OSError:
            groups = ""
        if self.container.id not in groups:
            raise DockerLabError(
                "the Docker lab needs the engine on this machine, in this PID namespace: the "
                "watchdog reads the lab's CPU time in /proc"
            )
        self.pid = pid

    # ---- the Jail interface (harness/sandbox/session.py) ------------------------------------
    def cpu_s(self) -> float:
        return tree_cpu_s(self.pid) if self.pid else 0.0

    def kill(self) -> None:
        """Without blocking: the CLI first (our end of the channel closes now), then the engine
        kills the container in a thread of its own."""
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        threading.Thread(target=self._kill, daemon=True).start()

    async def started(self) -> None:
        await asyncio.to_thread(self.find_pid)

    async def why_dead(self, returncode: int | None) -> str | None:
        return await asyncio.to_thread(self._why_dead)

    async def release(self) -> None:
        await asyncio.to_thread(self.remove)

    # ---- blocking engine calls --------------------------------------------------------------
    def _why_dead(self) -> str | None:
        with contextlib.suppress(Exception):
            if oom_killed(self.container):
                return f"the lab ran out of memory (limit {self.limits.memory_mb} MB)"
        return None

    def _kill(self) -> None:
        with contextlib.suppress(Exception):
            self.container.kill()

    def remove(self) -> None:
        """The container (killed if it runs) and its volume."""
        remove_container(self.container, self.volume)


class DockerLabSandbox(Sandbox):
    """Labs under Docker: one container per lab from the lab image for `packages`, started by
    the docker CLI with our pipes as its stdin and stdout."""

    name = "lab-docker"
    offers: ClassVar[frozenset[str]] = frozenset({"session"})

    def __init__(self, *, tmp_mb: int = 64, packages: tuple[str, ...] = ()) -> None:
        self.tmp_mb, self.packages = tmp_mb, tuple(packages)

    async def _start_session(
        self, files: dict[str, bytes], main: str, limits: Limits, stderr: IO[bytes]
    ) -> Session:
        # blocking engine calls (and, the first time, the image's build)
        jail = await asyncio.to_thread(
            DockerJail.create, files, limits, self.tmp_mb, self.packages, main
        )
        try:
            cmd, env = jail.attach_command()
            jail.proc = await spawn(
                *cmd,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,
                limit=frames.MAX_FRAME,
                env=env,
            )
        except (OSError, DockerLabError) as e:
            await asyncio.to_thread(jail.remove)
            raise DockerLabError(f"the lab failed to start: {e}") from e
        return Session(jail.proc, jail)
