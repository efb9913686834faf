"""The lab under Docker (harness/lab/docker_lab.py) on a real engine (started by the suite when
none runs; see harness/sandbox/docker_engine.py): the container is locked down, a hostile cell
reaches no network and none of the orchestrator's environment, the per-cell limits and the
restart semantics are bubblewrap's (a memory bomb restarts the lab with the message), and a
code-mode run of scripted-numeric-code completes with its lab in a container.

The first run builds the lab image (Python + the lab's packages, from a local wheelhouse) once;
later runs find it by its tag."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from support import docker_engine_or_skip
from support.probe_cells import LAB_PACKAGES, OURS, loopback_listener, secret_and_imports_cell

from interp_harness.agents.protocol import Observation, format_reply, parse_pairs
from interp_harness.agents.registry import get_agent
from interp_harness.function_store.benchmark import benchmark
from interp_harness.function_store.models import CallOutput
from interp_harness.harness.lab.docker_lab import OWNER_LABEL, owner
from interp_harness.harness.lab.frames import Call, CallResult
from interp_harness.harness.lab.limits import LabLimits
from interp_harness.harness.lab.process import LabProcess
from interp_harness.harness.lab.session import LOST, Cell, Lab
from interp_harness.harness.settings import Settings
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

CANARY = "lab-docker-canary-8d2e61b5"  # in this process's environment while the labs start


@pytest.fixture(scope="module")
def engine() -> Any:
    """The engine with the lab image built, or a skip saying why no engine can be started."""
    from interp_harness.harness.lab.docker_lab import ensure_lab_image

    client = docker_engine_or_skip()
    ensure_lab_image(client, LabLimits().packages)
    return client


async def _double(frame: Call) -> CallResult:
    """The orchestrator's side of target calls here: doubles numbers."""
    return CallResult(id=frame.id, ok=True, value=[2 * float(w) for w in frame.arguments["inputs"]])


async def _run(cells: Sequence[str], limits: LabLimits, inspect: list | None = None) -> list[Cell]:
    lab = Lab(benchmark("numeric").commands, limits)
    out = []
    try:
        for code in cells:
            out.append(await lab.run(code, _double))
            if inspect is not None and not inspect:  # the first container, as the engine has it
                c = lab._proc.jail.container  # type: ignore[union-attr]
                c.reload()
                inspect.append(c.attrs)
    finally:
        await lab.aclose()
    return out


def test_the_operator_chooses_the_lab_backend() -> None:
    assert Settings(sandbox="bwrap").lab_backend == "bwrap"
    assert Settings(sandbox="docker").lab_backend == "docker"  # follows the targets' backend
    assert Settings(sandbox="docker", lab_sandbox="bwrap").lab_backend == "bwrap"
    assert Settings(sandbox="bwrap", lab_sandbox="docker").lab_backend == "docker"
    assert LabLimits.from_settings(Settings(lab_sandbox="docker")).backend == "docker"


@pytest.mark.docker
@pytest.mark.slow
async def test_a_hostile_cell_reaches_no_network_and_nothing_of_ours(
    engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAB_DOCKER_CANARY", CANARY)
    with loopback_listener() as port:
        cell = (
            secret_and_imports_cell(CANARY, (*OURS, "docker", *LAB_PACKAGES))
            + f"""
for host in ('127.0.0.1', '172.17.0.1', '1.1.1.1'):
    try:
        socket.create_connection((host, {port}), timeout=2)
        print('CONNECTED', host)
    except OSError as e:
        print('no route', host, e.errno)
print('interfaces', sorted(n for _, n in socket.if_nameindex()))
print('routes', len(open('/proc/net/route').read().splitlines()[1:]))
for path in ('/opt/lab/target.py', '/opt/lab/new.py', '/usr/x'):
    try:
        open(path, 'a').close()
        print('WROTE', path)
    except OSError as e:
        print('read-only', path, e.errno)
print(sorted(os.listdir('/opt/lab')), os.getuid())
"""
        )
        attrs: list = []
        [c] = await _run([cell], LabLimits(backend="docker"), attrs)
    assert c.status == "ok", c.traceback
    lines = c.stdout.splitlines()
    assert lines[0] == "nothing found" and CANARY not in c.reply()
    importable = {ln.split()[0] for ln in lines if ln.endswith(" importable")}
    assert importable == {"numpy", "scipy.optimize", "matplotlib.pyplot"}
    assert not any(ln.startswith(("CONNECTED", "WROTE")) for ln in lines), lines
    # 127.0.0.1 is the container's own loopback: nothing listens there (ECONNREFUSED); the
    # other addresses have no route at all (ENETUNREACH)
    assert f"no route 127.0.0.1 {111}" in lines
    assert "no route 172.17.0.1 101" in lines and "no route 1.1.1.1 101" in lines
    assert "interfaces ['lo']" in lines and "routes 0" in lines
    assert sum(ln.startswith("read-only") for ln in lines) == 3
    assert lines[-1] == "['kernel.py', 'target.py'] 65534"
    [a] = attrs
    hc = a["HostConfig"]
    assert hc["NetworkMode"] == "none" and hc["ReadonlyRootfs"] is True
    assert hc["CapDrop"] == ["ALL"] and "no-new-privileges" in hc["SecurityOpt"]
    assert a["Config"]["User"] == "65534:65534"
    assert hc["Memory"] == 2048 * 2**20 and hc["PidsLimit"] == 32 and hc["NanoCpus"] == 10**9
    assert hc["Tmpfs"]["/tmp"].startswith("size=64m")
    assert not any(CANARY in e for e in a["Config"]["Env"])


@pytest.mark.docker
@pytest.mark.slow
async def test_cpu_limits_are_the_same_as_under_bwrap(engine: Any) -> None:
    # a wall limit far away: under any load only the CPU limits can end these cells
    limits = LabLimits(backend="docker", cell_wall_s=60, cell_cpu_s=1)
    out = await _run(
        [
            "kept = 'yes'",
            "while True:\n    pass",  # the kernel's own CPU timer: the lab is kept
            "kept",
            # turns the kernel's timers off: only the watchdog's CPU reading (in /proc) ends it
            "import signal\nsignal.setitimer(signal.ITIMER_PROF, 0)\n"
            "signal.setitimer(signal.ITIMER_REAL, 0)\nwhile True:\n    pass",
            "kept",
        ],
        limits,
    )
    assert [(c.status, c.error) for c in out] == [
        ("ok", None),
        ("error", "the cell used more than its CPU-time limit (1 s)"),
        ("ok", None),
        ("restarted", "the cell used more than its CPU-time limit (1 s)"),
        ("error", "NameError: name 'kept' is not defined"),
    ]
    assert out[2].value == "'yes'" and LOST in out[3].reply()


@pytest.mark.docker
@pytest.mark.slow
async def test_memory_wall_and_exits_restart_the_lab_as_under_bwrap(engine: Any) -> None:
    limits = LabLimits(backend="docker", memory_mb=512, cell_wall_s=5, tmp_mb=16)
    out = await _run(
        [
            "kept = 'yes'",
            # a memory bomb: the container's memory limit kills the lab
            "bomb = bytearray(2**30)",  # zero-filled: every page is touched
            "kept",
            # swallows the kernel's own interruption: only the watchdog's wall clock ends it
            "import time\nwhile True:\n    try:\n        time.sleep(10)\n    except BaseException:\n"
            "        pass",
            "import os\nos._exit(3)",
            "f = open('/tmp/fill', 'wb')\nfor _ in range(32):\n    f.write(b'z' * 1024 * 1024)",
            "from target import call_function\ncall_function([1, 2.5])",
        ],
        limits,
    )
    assert [c.status for c in out] == [
        "ok", "restarted", "error", "restarted", "restarted", "error", "ok",
    ], [(c.status, c.error) for c in out]  # fmt: skip
    assert out[1].error == "the lab ran out of memory (limit 512 MB)"
    assert LOST in out[1].reply()
    assert out[2].error == "NameError: name 'kept' is not defined"
    assert out[3].error == "the cell ran longer than its wall-time limit (5 s)"
    assert out[4].error == "the lab's process ended (status 3): it ended"
    assert (out[5].error or "").startswith("OSError: [Errno 28]")  # the private /tmp is full
    assert out[6].value == "[2.0, 5.0]"


def _started_labs(client: Any, since: float, until: float) -> int:
    events = client.events(
        since=int(since), until=int(until) + 1, decode=True,
        filters={"type": "container", "event": "start", "label": f"{OWNER_LABEL}={owner()}"},
    )  # fmt: skip
    # `since` is whole seconds: a lab an earlier test started in the same second is left out here
    return sum(1 for e in events if since <= e["timeNano"] / 1e9 <= until)


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.usefixtures("needs_bwrap")  # the targets and scoring stay in bubblewrap
def test_a_code_mode_run_with_its_lab_in_docker(
    engine: Any, cli_in_process: Callable[..., Any], tmp_path: Any
) -> None:
    db = f"sqlite:///{tmp_path / 'docker-lab.db'}"
    env = {
        "HARNESS_SANDBOX": "bwrap",
        "HARNESS_LAB_SANDBOX": "docker",
        "HARNESS_SCORE_HOOK": "default",
        "DATABASE_URL": db,
    }
    args = ("-d", "find-gen", "-f", "numeric", "-n", "1", "--no-floor")
    t0 = time.time()
    p = cli_in_process("run", "--agent", "scripted-numeric-code", "--mode", "code", *args, env=env)
    t1 = time.time()
    assert p.returncode == 0, p.stdout + p.stderr
    store = Store(make_engine(db))
    [run] = store.runs.latest()
    [ep] = store.episodes.of_run(run.id)
    assert (ep.status, ep.rounds) == ("completed", 2)
    [row] = store.lab.cells(ep.id)
    assert row.status == "ok" and row.n_calls == ep.target_calls > 0
    # the answer is the text baseline's conclusion on the outputs the cell's calls got
    pairs: list[tuple[str, str]] = []
    for c in store.episodes.target_calls(ep.id):
        outs = [CallOutput.model_validate(o) for o in c.outputs]
        pairs += parse_pairs(format_reply(outs), c.inputs, line_only=True)
    expected = get_agent("scripted-numeric").conclude([Observation(x=x, y=y) for x, y in pairs])
    assert ep.final_answer == expected
    scores = {s.metric: s.status for s in store.scores.of_episodes([ep.id])}
    assert "ok" in scores.values(), scores
    # this process (the CLI ran in it) started two lab containers: the preflight's check and
    # the episode's lab
    assert _started_labs(engine, t0, t1) == 2


@pytest.mark.docker
@pytest.mark.slow
async def test_a_lab_whose_orchestrator_is_gone_ends(engine: Any) -> None:
    """An orchestrator that dies closes the docker CLI's stdin: the container's stdin closes with
    it, so the kernel reads the end of its channel and the lab ends instead of idling on."""
    lab = await LabProcess.start("", LabLimits(backend="docker"))
    container = lab.jail.container  # type: ignore[attr-defined]
    try:
        assert lab.proc.stdin is not None
        lab.proc.stdin.close()  # what the orchestrator's death does to the pipe
        state = await asyncio.to_thread(container.wait, timeout=20)
        assert state["StatusCode"] == 0  # the kernel's own exit, not a kill
    finally:
        await lab.close()
