"""The Docker backend on a real engine (started by the suite when none runs; see docker_engine).

The first run builds the base image with debootstrap and the target image from a local wheelhouse
(minutes); both are cached as tags. Skipped only where no engine can be started (reason shown)."""

import pytest

from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.service.client import TargetServiceClient
from interp_harness.harness.sandbox import Limits
from interp_harness.harness.sandbox.pool import ServicePool, service_argv, target_files

pytestmark = [pytest.mark.docker, pytest.mark.slow]
F473 = "find-v1/numeric/f00473"


@pytest.fixture(scope="module")
def docker_sb():
    from interp_harness.harness.sandbox.docker_engine import docker_sandbox_or_skip

    return docker_sandbox_or_skip()


async def test_target_container_serves_catalog_target(docker_sb):
    pool = ServicePool(docker_sb)
    pool.serve([Catalog().get(F473)])
    client = TargetServiceClient(pool.url_for(F473))
    try:
        outs = await client.call(F473, ["1", "-2", "abc"])
        assert outs[0].output == "-6.5" and outs[1].output == "-2.0"  # -1.5*x - 5.0
        assert outs[2].error is not None and outs[2].output is None
    finally:
        await client.aclose()
        pool.close()


def test_container_is_locked_down_and_has_no_route_out(docker_sb):
    h = docker_sb.start_service(
        service_argv(docker_sb),
        files=target_files([Catalog().get(F473)]),
        env={"HARNESS_SERVICE_TARGETS_DIR": "/sandbox"},
    )
    try:
        c = docker_sb.client.containers.get(h.meta["container"])
        hc = c.attrs["HostConfig"]
        assert hc["ReadonlyRootfs"] is True and hc["PidsLimit"] > 0 and hc["Memory"] > 0
        assert hc["CapDrop"] == ["ALL"] and c.attrs["Config"]["User"] == "65534:65534"
        assert hc["NetworkMode"] == "none"  # the channel is the Unix socket, nothing else
        probe = (
            "import socket\n"
            "for host in ('1.1.1.1', '172.17.0.1', '172.18.0.1'):\n"
            "    try:\n"
            "        socket.create_connection((host, 53), timeout=2); print('CONNECTED')\n"
            "    except OSError as e: print('no route', e.errno)\n"
            "rows = open('/proc/net/route').read().splitlines()[1:]\n"
            "print('routes', len(rows), sorted(n for _, n in socket.if_nameindex()))\n"
        )
        code, out = c.exec_run(["python3", "-c", probe])
        assert code == 0 and b"CONNECTED" not in out, out
        assert out.count(b"no route 101") == 3, out  # ENETUNREACH: not even a route to try
        assert out.strip().splitlines()[-1] == b"routes 0 ['lo']", out
        code, out = c.exec_run(["sh", "-c", "touch /usr/x || echo RO; ls -ln /sandbox"])
        assert b"RO" in out and b"65534" in out
    finally:
        docker_sb.stop(h)


def test_run_no_network_limits_and_stdin(docker_sb):
    r = docker_sb.run(
        ["python3", "/sandbox/main.py", "a b"],
        files={
            "main.py": b"import sys, socket\nprint(sys.argv[1:], sys.stdin.read())\n"
            b"print(sorted(n for _, n in socket.if_nameindex()))"
        },
        stdin=b"IN",
    )
    assert r.error is None and r.returncode == 0, r
    assert r.stdout == b"['a b'] IN\n['lo']\n"
    r = docker_sb.run(["python3", "-c", "import time; time.sleep(60)"], limits=Limits(timeout_s=2))
    assert r.timed_out and r.error.startswith("timeout")
    r = docker_sb.run(["python3", "-c", "print('x' * 100000)"], limits=Limits(max_output_bytes=100))
    assert r.output_truncated and len(r.stdout) == 100
