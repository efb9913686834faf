"""The compose stack for real: CPU images built (or reused by content digest), `docker compose
--profile cpu up -d --wait`, a scripted-agent run submitted over REST through the published port,
isolation probes from inside `targets` and `sandbox`, then `docker compose down -v`.

Needs a Docker engine (started by the suite, see docker_engine) and Compose v2 (installed by
scripts/install.sh as a Docker CLI plugin; missing, it fails unless HARNESS_TEST_SKIP_COMPOSE=1,
see conftest.py). Build and start-up times are printed (`-s`)."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from pathlib import Path

import httpx
import pytest
from support import docker_engine_or_skip, free_port

pytestmark = [pytest.mark.docker, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[3]
TOKEN = "compose-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def engine(compose_cli):  # type: ignore[no-untyped-def]
    """A Docker engine, or a skip (support.docker_engine_or_skip). The tools come first, so a
    missing docker CLI or Compose fails (conftest.py) before this can skip."""
    return docker_engine_or_skip()


@pytest.fixture(scope="module")
def compose_env(engine, compose_cli) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """DOCKER_HOST for the engine `ensure_engine` found: the environment's, else ours."""
    import docker

    from interp_harness.harness.sandbox.docker_engine import SOCKET

    try:
        docker.from_env().ping()
        return compose_cli
    except Exception:
        return {**compose_cli, "DOCKER_HOST": f"unix://{SOCKET}"}


def _compose(env: dict[str, str], project: str, *args: str, timeout: float = 900) -> str:
    p = subprocess.run(
        ["docker", "compose", "-p", project, "-f", str(ROOT / "compose.yaml"), *args],
        env=env, cwd=ROOT, capture_output=True, timeout=timeout,
    )  # fmt: skip
    assert p.returncode == 0, f"docker compose {' '.join(args)}:\n{p.stderr.decode()[-4000:]}"
    return p.stdout.decode()


def _remove_stale_test_stacks(env: dict[str, str]) -> None:
    """A killed test run leaves its stack up, and `restart: unless-stopped` brings it back with the
    engine (six containers, ~2 GB, found running here): take down earlier test projects first."""
    out = subprocess.run(
        ["docker", "compose", "ls", "-a", "--format", "json"],
        env=env, capture_output=True, text=True, timeout=60,
    ).stdout  # fmt: skip
    for p in json.loads(out or "[]"):
        if p["Name"].startswith("ihtest"):
            _compose(env, p["Name"], "down", "-v", "--timeout", "5")


@pytest.fixture(scope="module")
def stack(engine, compose_env, tmp_path_factory):  # type: ignore[no-untyped-def]
    from interp_harness.harness.sandbox.compose_images import build_cpu_images

    t0 = time.monotonic()
    build_cpu_images(engine, lambda what, tag, s: print(f"image {what:>13} {tag} {s:.1f} s"))
    print(f"images ready in {time.monotonic() - t0:.1f} s")
    port = free_port()
    project = f"ihtest{uuid.uuid4().hex[:6]}"
    env_file = tmp_path_factory.mktemp("compose") / "harness.env"
    env_file.write_text(f"HARNESS_API_TOKENS={TOKEN}\n")  # the api's secrets file
    env = {**compose_env, "HARNESS_PORT": str(port), "COMPOSE_PROFILES": "cpu",
           "HARNESS_ENV_FILE": str(env_file)}  # fmt: skip
    _remove_stale_test_stacks(env)
    t0 = time.monotonic()
    try:
        _compose(env, project, "up", "-d", "--wait", "--wait-timeout", "600")
        print(f"stack healthy in {time.monotonic() - t0:.1f} s")
        yield env, project, f"http://127.0.0.1:{port}"
    finally:
        logs = subprocess.run(
            ["docker", "compose", "-p", project, "-f", str(ROOT / "compose.yaml"), "logs",
             "--no-color", "--tail", "40"], env=env, cwd=ROOT, capture_output=True,
        )  # fmt: skip
        print(logs.stdout.decode()[-6000:])
        _compose(env, project, "down", "-v", "--timeout", "5")


def test_every_service_is_healthy(stack) -> None:  # type: ignore[no-untyped-def]
    env, project, _ = stack
    rows = [json.loads(x) for x in _compose(env, project, "ps", "--format", "json").splitlines()]
    health = {r["Service"]: r["Health"] for r in rows}
    assert health == {s: "healthy" for s in
                      ("api", "targets", "sandbox", "backbone", "judge", "intervention")}  # fmt: skip
    published = {r["Service"]: r["Publishers"] for r in rows}
    assert [p["URL"] for p in published["api"] if p["PublishedPort"]] == ["127.0.0.1"]
    assert all(
        not any(p["PublishedPort"] for p in v or []) for s, v in published.items() if s != "api"
    )


def test_scripted_run_over_rest(stack) -> None:  # type: ignore[no-untyped-def]
    _, _, url = stack
    c = httpx.Client(base_url=url, timeout=30)
    assert c.get("/healthz").json()["status"] == "ok"
    # no interpolation floor: its second run tests nothing of the stack the first does not
    body = {"agent": "scripted-numeric", "dataset": "find-gen", "family": "numeric", "limit": 2}
    body["floor"] = False
    assert c.post("/runs", json=body).status_code == 401  # tokens come from the environment
    r = c.post("/runs", json=body, headers=AUTH)
    assert r.status_code == 201, r.text
    run_id = r.json()["id"]
    deadline = time.monotonic() + 600
    while (detail := c.get(f"/runs/{run_id}").json())["status"] not in ("completed", "failed"):
        assert time.monotonic() < deadline, detail
        time.sleep(2)
    assert detail["status"] == "completed", detail
    assert detail["progress"]["by_status"] == {"completed": 2}, detail
    print("run metrics:", json.dumps(detail["metrics"]))
    eps = c.get(f"/runs/{run_id}/episodes").json()
    assert len(eps) == 2
    for e in eps:
        full = c.get(f"/episodes/{e['id']}").json()
        roles = [m["role"] for m in full["messages"]]
        assert roles[:3] == ["system", "user", "assistant"] and roles[-1] == "assistant"
        # target calls ran in the `targets` container and came back with outputs
        assert full["calls"], full
        outs = [o for call in full["calls"] for o in call["outputs"]]
        assert outs and all(o["error"] is None for o in outs[:10]), outs[:10]
        scores = {s["metric"]: s for s in full["scores"]}
        # the answer's code ran in the `sandbox` container: a real score, not an error state
        code_scores = [
            s for s in full["scores"] if s.get("error") is None and s["value"] is not None
        ]
        assert code_scores, scores
        errors = [s for s in full["scores"] if s.get("error")]
        assert not errors, errors


PROBE = (
    "import json, socket\n"
    "out = {'ifaces': sorted(n for _, n in socket.if_nameindex()),\n"
    "       'routes': len(open('/proc/net/route').read().splitlines()[1:])}\n"
    "try:\n"
    "    socket.getaddrinfo('api', 8000); out['dns'] = 'resolved'\n"
    "except OSError as e:\n"
    "    out['dns'] = 'failed'\n"
    "res = []\n"
    "for host in HOSTS:\n"
    "    try:\n"
    "        socket.create_connection((host, 8000), timeout=3).close(); res.append('CONNECTED')\n"
    "    except OSError as e:\n"
    "        res.append(e.errno)\n"
    "out['connect'] = res\n"
    "print(json.dumps(out))\n"
)


def test_untrusted_containers_reach_neither_api_nor_outside(stack) -> None:  # type: ignore[no-untyped-def]
    env, project, _ = stack
    api_id = _compose(env, project, "ps", "-q", "api").strip()
    inspect = subprocess.run(
        ["docker", "inspect", api_id], env=env, capture_output=True, check=True
    )
    nets = json.loads(inspect.stdout)[0]["NetworkSettings"]["Networks"]
    # the api's addresses and its networks' gateways (the host side of each bridge)
    hosts = sorted(
        {n["IPAddress"] for n in nets.values()} | {n["Gateway"] for n in nets.values()} - {""}
    )
    assert len(hosts) >= 2, nets
    for svc in ("targets", "sandbox"):
        code = PROBE.replace("HOSTS", repr(hosts))
        out = json.loads(_compose(env, project, "exec", "-T", svc, "python3", "-c", code))
        assert out["ifaces"] == ["lo"] and out["routes"] == 0, (svc, out)
        assert out["dns"] == "failed", (svc, out)
        assert out["connect"] == [101] * len(hosts), (svc, out)  # ENETUNREACH, nothing sent
    # the api itself does reach the models network (control: the probe can succeed)
    out = json.loads(_compose(env, project, "exec", "-T", "api", "python3", "-c",
                              PROBE.replace("HOSTS", repr(["backbone"]))))  # fmt: skip
    assert out["connect"] == ["CONNECTED"], out
