"""Getting a Docker engine and the target image on one machine with no registry access.

* `ensure_engine()`: use the engine DOCKER_HOST / the default socket names; else, as root, start
  `dockerd` in the background with its own data-root and socket (flags that work inside
  containers and VMs: vfs storage, no iptables, no default bridge; override with
  HARNESS_DOCKERD_ARGS).
* `ensure_base_image()`: a Debian bookworm + python3 image made with `debootstrap` from the Debian
  mirror and `docker import`ed; cached as a tag, so later runs reuse it.
* `ensure_target_image()`: builds `sandbox_images/target/Dockerfile` from a local wheelhouse
  (`pip download` of the service's runtime dependencies + `pip wheel --no-deps` of this project,
  and the operator's plugin wheels, HARNESS_TARGET_IMAGE_WHEELS).
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

log = logging.getLogger(__name__)

STATE = Path(os.environ.get("HARNESS_DOCKER_STATE", "/var/lib/interp-harness"))
SOCKET = "/run/interp-harness-docker.sock"
BASE_TAG = "interp-harness/base:bookworm-python3"
TARGET_REPO = "interp-harness/target"
DEBIAN_MIRROR = os.environ.get("HARNESS_DEBIAN_MIRROR", "http://deb.debian.org/debian")
# What the target service imports at run time (torch is not here: MLP targets need the bwrap
# backend or an image built FROM one that has torch, via BASE_IMAGE).
SERVICE_REQUIREMENTS = [
    "pydantic>=2.6",
    "pydantic-settings>=2.2",
    "fastapi>=0.110",
    "uvicorn>=0.29",
    "httpx>=0.27",
    "numpy>=1.26",
    "scipy>=1.11",
    "regex>=2023.0",
]
DEFAULT_DOCKERD_ARGS = "--iptables=false --ip6tables=false --bridge=none"


class EngineUnavailable(RuntimeError):
    pass


def project_root() -> Path:
    """The checkout (src/interp_harness/harness/sandbox/ is four folders below it)."""
    return Path(__file__).resolve().parents[4]


def package_dir() -> Path:
    """src/interp_harness: each part is a folder of the same name as its import name."""
    return project_root() / "src" / "interp_harness"


# what a wheel or an image source holds besides src/ (the rest is in pyproject.toml)
PROJECT_FILES = ("pyproject.toml", "README.md")


def _client(url: str | None = None):
    import docker

    c = docker.DockerClient(base_url=url) if url else docker.from_env()
    c.ping()
    return c


def _answering():  # type: ignore[no-untyped-def]
    import docker

    for url in (None, f"unix://{SOCKET}"):
        try:
            return _client(url)
        except (docker.errors.DockerException, OSError):
            pass
    return None


def ensure_engine(timeout_s: float = 60.0):
    """A connected docker client; starts our own dockerd when none answers (root only)."""
    if (client := _answering()) is not None:
        return client
    if os.geteuid() != 0:
        raise EngineUnavailable("no Docker engine answers and starting dockerd needs root")
    STATE.mkdir(parents=True, exist_ok=True)
    # one starter per machine: two processes that both found no engine (two test workers, two
    # `harness serve`) would each start a dockerd on the same data-root, exec-root and socket
    with open(STATE / "dockerd.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (client := _answering()) is not None:  # another process started it meanwhile
            return client
        return _start_dockerd(timeout_s)


def _start_dockerd(timeout_s: float):  # type: ignore[no-untyped-def]
    dockerd = shutil.which("dockerd")
    if dockerd is None:
        raise EngineUnavailable(
            "no Docker engine answers and `dockerd` is not installed (docker.io)"
        )
    logf = open(STATE / "dockerd.log", "ab")  # noqa: SIM115 - the daemon keeps it
    args = os.environ.get("HARNESS_DOCKERD_ARGS", DEFAULT_DOCKERD_ARGS).split()
    if not any(a.startswith("--storage-driver") for a in args):
        args.append(f"--storage-driver={_storage_driver()}")
    proc = subprocess.Popen(
        [dockerd, "--data-root", str(STATE / "docker"), "--exec-root", "/run/interp-harness-docker",
         "--pidfile", "/run/interp-harness-docker.pid", "-H", f"unix://{SOCKET}", *args],
        stdout=logf, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = (STATE / "dockerd.log").read_bytes()[-1500:].decode("utf-8", "replace")
            raise EngineUnavailable(f"dockerd exited ({proc.returncode}):\n{tail}")
        try:
            return _client(f"unix://{SOCKET}")
        except Exception:
            time.sleep(0.5)
    raise EngineUnavailable(f"dockerd did not answer on {SOCKET} within {timeout_s:g} s")


def _storage_driver() -> str:
    """overlay2 where an overlay mount works on the state disk (fast), else vfs (copies)."""
    probe = Path(tempfile.mkdtemp(prefix="ovl-probe-", dir=STATE))
    try:
        for d in ("l", "u", "w", "m"):
            (probe / d).mkdir()
        opts = f"lowerdir={probe}/l,upperdir={probe}/u,workdir={probe}/w"
        ok = subprocess.run(["mount", "-t", "overlay", "overlay", "-o", opts, str(probe / "m")],
                            capture_output=True).returncode == 0  # fmt: skip
        if ok:
            subprocess.run(["umount", str(probe / "m")], capture_output=True)
        return "overlay2" if ok else "vfs"
    finally:
        shutil.rmtree(probe, ignore_errors=True)


def ensure_base_image(client) -> str:
    import docker

    try:
        client.images.get(BASE_TAG)
        return BASE_TAG
    except docker.errors.ImageNotFound:
        pass
    if shutil.which("debootstrap") is None:
        raise EngineUnavailable("building the base image needs `debootstrap` (Debian package)")
    root = STATE / "debootstrap-bookworm"
    if not (root / "usr/bin/python3").exists():
        shutil.rmtree(root, ignore_errors=True)
        log.warning("debootstrap: building a bookworm + python3 root (once; takes minutes)")
        subprocess.run(
            [
                "debootstrap",
                "--variant=minbase",
                "--include=python3",
                "bookworm",
                str(root),
                DEBIAN_MIRROR,
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    with tempfile.TemporaryDirectory() as tmp:
        tar_path = Path(tmp) / "rootfs.tar"
        with tarfile.open(tar_path, "w") as tar:
            for entry in sorted(os.listdir(root)):
                if entry in ("proc", "sys", "dev"):
                    continue
                tar.add(root / entry, arcname=entry)
        repo, tag = BASE_TAG.split(":")
        client.api.import_image_from_file(str(tar_path), repository=repo, tag=tag)
    return BASE_TAG


def build_wheelhouse(dest: Path) -> None:
    """pip's wheel, the service's dependencies and this project, all as wheels (no sdists)."""
    dest.mkdir(parents=True, exist_ok=True)
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    (dest / "requirements.txt").write_text("\n".join(SERVICE_REQUIREMENTS) + "\n")
    subprocess.run([*pip, "download", "--only-binary=:all:", "--python-version", "3.11",
                    "--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_17_x86_64",
                    "--platform", "manylinux_2_28_x86_64", "--implementation", "cp",
                    "-d", str(dest), "pip", "-r", str(dest / "requirements.txt")], check=True)  # fmt: skip
    pip_whl = next(dest.glob("pip-*.whl"))
    pip_whl.rename(dest / "pip.whl")
    build_project_wheel(dest)


def build_project_wheel(dest: Path) -> None:
    """This project as a wheel in `dest`, built from a private copy of its sources: setuptools
    writes `*.egg-info` and `build/` next to the sources it builds, and an egg-info in the checkout
    (on sys.path under `PYTHONPATH=.`) hides the installed metadata Inspect names our tasks by."""
    root = project_root()
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    with tempfile.TemporaryDirectory(prefix="project-src-") as tmp:
        src = Path(tmp)
        for name in PROJECT_FILES:
            shutil.copy(root / name, src / name)
        shutil.copytree(root / "src", src / "src", ignore=skip)
        subprocess.run([sys.executable, "-m", "pip", "-q", "--disable-pip-version-check", "wheel", "--no-deps",
                        "--no-build-isolation", "-w", str(dest), str(src)],
                       check=True, stdout=subprocess.DEVNULL)  # fmt: skip


def _source_digest(wheels: Sequence[Path] = ()) -> str:
    h = hashlib.sha256()
    root = project_root()
    # the service's code: the targets and the layers below them (model_services' clients; agents:
    # the protocol module)
    pkg = package_dir()
    code = [*pkg.glob("*.py")]
    for part in ("sdk", "function_store", "model_services", "agents"):
        code += (pkg / part).rglob("*.py")
    for p in sorted(code):
        h.update(str(p.relative_to(root)).encode() + p.read_bytes())
    h.update((root / "sandbox_images/target/Dockerfile").read_bytes())
    for w in wheels:  # the plugins installed into the image: a new build of one is a new image
        h.update(w.name.encode() + w.read_bytes())
    return h.hexdigest()[:12]


def _check_wheels(wheels: Sequence[Path]) -> list[Path]:
    bad = [str(w) for w in wheels if w.suffix != ".whl" or not w.is_file()]
    if bad:
        raise EngineUnavailable(
            f"HARNESS_TARGET_IMAGE_WHEELS names what is not a wheel file: {', '.join(bad)}"
        )
    return [w.resolve() for w in wheels]


def ensure_target_image(client, base_image: str | None = None, wheels: Sequence[Path] = ()) -> str:
    """The target image for the current source and `wheels` (benchmark plugins, installed into it
    without their dependencies; checked by `target_sandbox_options`), tagged by a digest of both."""
    import docker

    base_image = base_image or ensure_base_image(client)
    tag = f"{TARGET_REPO}:{_source_digest(wheels)}"
    try:
        client.images.get(tag)
        return tag
    except docker.errors.ImageNotFound:
        pass
    log.info("building the target image %s (once per source and plugin wheels)", tag)
    with tempfile.TemporaryDirectory(prefix="target-image-") as ctx:
        build_wheelhouse(Path(ctx) / "wheels")
        plugins = Path(ctx) / "wheels" / "plugins"
        plugins.mkdir()
        for w in wheels:
            shutil.copy(w, plugins / w.name)
        shutil.copy(project_root() / "sandbox_images/target/Dockerfile", Path(ctx) / "Dockerfile")
        client.images.build(
            path=ctx,
            tag=tag,
            buildargs={"BASE_IMAGE": base_image},
            network_mode="none",
            rm=True,
            forcerm=True,
        )
    return tag


def target_sandbox_options(image: str | None, wheels: Sequence[Path]) -> dict[str, object]:
    """HARNESS_SANDBOX=docker's DockerSandbox options: the local engine (started when none answers,
    as root) and the operator's image, or the one built here from this installation and the
    plugin wheels."""
    if image and wheels:
        raise EngineUnavailable(
            "HARNESS_TARGET_IMAGE_WHEELS go into the image the harness builds; with "
            "HARNESS_TARGET_IMAGE set, install them into that image instead"
        )
    wheels = _check_wheels(wheels)  # before the engine: a typo is said at once
    client = ensure_engine()
    return {"client": client, "image": image or ensure_target_image(client, wheels=wheels)}


def docker_sandbox_or_skip():
    """For tests: a DockerSandbox on a real engine, or pytest.skip saying why there is none."""
    import pytest

    from interp_harness.harness.sandbox.docker import DockerSandbox

    try:
        client = ensure_engine()
    except EngineUnavailable as e:
        pytest.skip(f"no Docker engine can be started here: {e}")
    return DockerSandbox(client=client, image=ensure_target_image(client))
