"""Target code inside a service's sandbox cannot take over the channels the orchestrator trusts.

A hostile FIND script (sbx_hostile_script.py) runs in the same service as two sibling targets: a
numeric script and an entity-style script that reaches the backbone through the service's one
forwarded socket. It tries to replace /run/sandbox/service.sock and backbone.sock, to reach the
service's descriptors through /proc (open, pidfd_getfd), to accept on inherited sockets, to write
forged lines into other processes' pipes and to rewrite other targets' files. The siblings'
outputs must stay what their own code computes, and the orchestrator must keep talking to the
genuine service.
"""

import asyncio
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from sbx_hostile_script import HOSTILE_SCRIPT
from support.find_scripts import numeric_script, script_target

from interp_harness.function_store.models import Target
from interp_harness.function_store.service.client import TargetServiceClient
from interp_harness.harness.sandbox import Limits
from interp_harness.harness.sandbox.pool import service_argv, target_files

HOSTILE = "find-import/numeric/f00001"
NUMERIC = "find-import/numeric/f00002"
ENTITY = "find-import/entities/f00003"
GENUINE = "genuine-backbone-reply"

# an entity-style FIND script: its output for a word is what the backbone answers ({API_BASE} is
# filled in by the service with its forwarded backbone URL, as for FIND's neuron modules)
ENTITY_SCRIPT = """import sys, urllib.request
API = {API_BASE}
outputs = ''
for arg in sys.argv[1:]:
    reply = urllib.request.urlopen(API + '/echo', timeout=20).read().decode()
    outputs += f'({arg}, {reply}) '
print(f'Function input - output pairs: {outputs}')
"""


class _Backbone(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = GENUINE.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def backbone():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Backbone)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _target(tmp_path, tid: str, family: str, code: str, **spec) -> Target:
    folder = tmp_path / tid.rsplit("/", 1)[1]
    folder.mkdir()
    return script_target(folder / "function_code.py", code, tid, family, **spec)


async def _outputs(url: str, tid: str, inputs: list[str]) -> list[str | None]:
    client = TargetServiceClient(url, timeout_s=60)  # a new connection each time
    try:
        outs = await client.call(tid, inputs)
        return [o.output if o.error is None else f"error: {o.error}" for o in outs]
    finally:
        await client.aclose()


async def _attack(sandbox, backbone: str | None, targets: list[Target], want: dict) -> str | None:
    """Start one service for `targets`, check `want` ({target: (inputs, outputs)}), let the
    hostile target run, check `want` again for a while; the hostile target's own report."""
    handle = sandbox.start_service(
        service_argv(sandbox),
        files=target_files(targets),
        env={"HARNESS_SERVICE_TARGETS_DIR": "/sandbox", "HARNESS_SERVICE_CALL_TIMEOUT_S": "40"},
        limits=Limits(timeout_s=60.0, memory_mb=2048),
        forward_url=backbone,
    )
    try:
        for tid, (inputs, outputs) in want.items():
            assert await _outputs(handle.url, tid, inputs) == outputs
        reached = (await _outputs(handle.url, HOSTILE, ["0"]))[0]
        await asyncio.sleep(2.0)  # its daemon replaces the sockets and starts on the descriptors
        deadline = time.monotonic() + 8.0
        rounds = 0
        while time.monotonic() < deadline or rounds < 3:
            for tid, (inputs, outputs) in want.items():
                assert await _outputs(handle.url, tid, inputs) == outputs, f"round {rounds}"
            rounds += 1
        return reached
    finally:
        sandbox.stop(handle)


@pytest.mark.slow
async def test_hostile_script_cannot_answer_for_a_sibling_or_reach_the_service(
    bwrap, tmp_path, backbone
):
    hostile = _target(tmp_path, HOSTILE, "numeric", HOSTILE_SCRIPT)
    sibling = _target(tmp_path, NUMERIC, "numeric", numeric_script("2*x + 1"))
    reached = await _attack(bwrap, backbone, [hostile, sibling], {NUMERIC: (["7"], ["15.0"])})
    # and, from inside, it could reach none of the service's sockets or pipes
    assert reached == "nothing"


@pytest.mark.slow
async def test_hostile_script_cannot_intercept_the_backbone(bwrap, tmp_path, backbone):
    hostile = _target(tmp_path, HOSTILE, "numeric", HOSTILE_SCRIPT)
    entity = _target(tmp_path, ENTITY, "entities", ENTITY_SCRIPT, placeholders=True)
    reached = await _attack(bwrap, backbone, [hostile, entity], {ENTITY: (["cat"], [GENUINE])})
    assert reached == "nothing"


@pytest.mark.docker
@pytest.mark.slow
async def test_docker_hostile_script_cannot_replace_the_socket_or_answer_for_a_sibling(tmp_path):
    from interp_harness.harness.sandbox.docker_engine import docker_sandbox_or_skip

    docker_sb = docker_sandbox_or_skip()
    hostile = _target(tmp_path, HOSTILE, "numeric", HOSTILE_SCRIPT)
    sibling = _target(tmp_path, NUMERIC, "numeric", numeric_script("2*x + 1"))
    reached = await _attack(docker_sb, None, [hostile, sibling], {NUMERIC: (["7"], ["15.0"])})
    assert reached == "nothing"
