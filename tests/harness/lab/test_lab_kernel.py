"""The lab itself (harness/lab: kernel, process, session) in real bubblewrap: cells share state
and reply what they printed, returned and raised; the lab sees nothing of the orchestrator; the
per-cell limits interrupt a cell (variables kept) or restart the lab (variables lost, said so);
a cell that abuses the channel only breaks its own lab; target calls from a cell carry words and
come back as values, refused past the per-cell cap."""

from __future__ import annotations

import os
from collections.abc import Sequence

import pytest
from support.probe_cells import LAB_PACKAGES, OURS, loopback_listener, secret_and_imports_cell

from interp_harness.function_store.benchmark import benchmark
from interp_harness.harness.lab.frames import Call, CallResult
from interp_harness.harness.lab.limits import LabLimits
from interp_harness.harness.lab.session import LOST, Cell, Lab

pytestmark = pytest.mark.usefixtures("needs_bwrap")
SECRET = "lab-test-secret-4f1c9a0e7b"  # in this process's environment while the labs start


class Calls:
    """The orchestrator's side of target calls, for these tests: doubles numbers (the episode's
    real path is tests/harness/lab/test_code_mode.py's)."""

    def __init__(self) -> None:
        self.frames: list[Call] = []

    async def __call__(self, frame: Call) -> CallResult:
        self.frames.append(frame)
        words = frame.arguments.get("inputs", [])
        if words == ["refuse"]:
            return CallResult(id=frame.id, ok=False, kind="refused", error="not that one")
        if words == ["budget"]:
            return CallResult(id=frame.id, ok=False, kind="budget", error="spent")
        values = [2 * float(w) if w != "bad" else None for w in words]
        errors = [{"input": "bad", "error": "not a number"}] if "bad" in words else []
        return CallResult(id=frame.id, ok=True, value=values, errors=errors)


async def run(cells: Sequence[str], limits: LabLimits | None = None, calls: Calls | None = None):  # type: ignore[no-untyped-def]
    lab = Lab(benchmark("numeric").commands, limits or LabLimits())
    calls = calls or Calls()
    try:
        return [await lab.run(code, calls) for code in cells]
    finally:
        await lab.aclose()


async def test_cells_share_state_and_reply_what_they_printed() -> None:
    out = await run(
        [
            "x = 41",
            "import sys\nprint('to out')\nprint('to err', file=sys.stderr)\nx + 1",
            "def g():\n    return 1 / 0\ng()",
            "def broken(:\n    pass",
            "import os\nos.write(1, b'raw\\n')\nx",
        ]
    )
    assert [c.status for c in out] == ["ok", "ok", "error", "error", "ok"]
    assert (out[1].stdout, out[1].stderr, out[1].value) == ("to out\n", "to err\n", "42")
    assert out[2].error == "ZeroDivisionError: division by zero"
    tb = out[2].traceback or ""
    assert 'File "<cell 3>", line 2, in g' in tb and "return 1 / 0" in tb
    assert "kernel.py" not in tb  # the kernel's own frame is left out
    assert (out[3].error or "").startswith("SyntaxError")
    assert (out[4].stdout, out[4].value) == ("raw\n", "41")  # fd 1 is captured too
    reply = out[1].reply()
    assert reply.startswith("Response: cell 2 ran (0 target calls).\n")
    assert "stdout (7 characters):\nto out\n" in reply and "value (2 characters):\n42\n" in reply


@pytest.mark.slow
async def test_a_child_the_cell_forked_does_not_answer_for_the_kernel() -> None:
    """The parent outlasts the child's way out of the cell (two 2 s waits for its captures, whose
    threads a fork does not copy): the child must not reach the channel."""
    out = await run(
        [
            "import os, time\nkept = 1\npid = os.fork()\nif pid:\n    time.sleep(6)\n"
            "'parent' if pid else 'child'",
            "kept",
        ]
    )
    assert [(c.status, c.value) for c in out] == [("ok", "'parent'"), ("ok", "1")]


async def test_the_lab_sees_nothing_of_the_orchestrator(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("LAB_TEST_SECRET", SECRET)
    store = tmp_path / "harness.db"
    store.write_text(SECRET)
    data = os.environ["HARNESS_DATA_DIR"]
    with loopback_listener() as port:
        cell = (
            secret_and_imports_cell(SECRET, (*OURS, "torch", *LAB_PACKAGES))
            + f"""
print('store', os.path.exists({str(store)!r}), 'data', os.path.exists({data!r}))
try:
    socket.create_connection(('127.0.0.1', {port}), timeout=2)
    print('connected')
except OSError as e:
    print('no network', type(e).__name__)
print(sorted(os.listdir('/opt/lab')), os.getuid())
"""
        )
        [c] = await run([cell])
    assert c.status == "ok", c.traceback
    lines = c.stdout.splitlines()
    assert lines[0] == "nothing found"
    assert SECRET not in c.reply()
    importable = {ln.split()[0] for ln in lines if ln.endswith(" importable")}
    assert importable == {"numpy", "scipy.optimize", "matplotlib.pyplot"}
    assert "store False data False" in lines
    assert any(ln.startswith("no network") for ln in lines)
    assert lines[-1] == "['kernel.py', 'target.py'] 65534"


async def test_soft_limits_stop_the_cell_and_keep_the_lab() -> None:
    limits = LabLimits(cell_wall_s=2, cell_cpu_s=1)
    out = await run(
        [
            "kept = 'yes'",
            "import time\nwhile True:\n    time.sleep(0.05)",  # wall clock, no CPU
            "while True:\n    pass",  # CPU
            "kept",
        ],
        limits,
    )
    assert [c.status for c in out] == ["ok", "error", "error", "ok"]
    assert out[1].error == "the cell ran longer than its wall-time limit (2 s)"
    # under a loaded machine the wall clock may stop it first; either is a stopped cell
    assert out[2].error in (
        "the cell used more than its CPU-time limit (1 s)",
        "the cell ran longer than its wall-time limit (2 s)",
    )
    assert out[3].value == "'yes'"


async def test_hard_limits_restart_the_lab_and_say_variables_were_lost() -> None:
    limits = LabLimits(cell_wall_s=1, cell_cpu_s=30)
    out = await run(
        [
            "kept = 1",
            # swallows the kernel's own interruption: only the orchestrator's watchdog ends it
            "import time\nwhile True:\n    try:\n        time.sleep(10)\n    except BaseException:\n"
            "        pass",
            "kept",
            "import os\nos._exit(3)",
            "1 + 1",
        ],
        limits,
    )
    assert [c.status for c in out] == ["ok", "restarted", "error", "restarted", "ok"]
    assert out[1].error == "the cell ran longer than its wall-time limit (1 s)"
    assert LOST in out[1].reply() and "was stopped" in out[1].reply()
    assert out[2].error == "NameError: name 'kept' is not defined"
    assert out[3].error == "the lab's process ended (status 3): it ended"
    assert out[4].value == "2"


async def test_memory_processes_disk_and_output_are_capped() -> None:
    limits = LabLimits(memory_mb=768, max_procs=16, tmp_mb=16, max_output_chars=1000)
    out = await run(
        [
            "x = bytearray(2 * 1024**3)",
            "import os\nn = 0\ntry:\n    for _ in range(100):\n        if os.fork() == 0:\n"
            "            import time; time.sleep(60)\n        n += 1\nexcept OSError as e:\n"
            "    print('fork refused after', n)\nn < 16",
            "f = open('/tmp/fill', 'wb')\nfor _ in range(64):\n    f.write(b'z' * 1024 * 1024)",
            "print('x' * 5_000_000)",
            "import os\nfor _ in range(200):\n    os.write(2, b'y' * 100_000)",
            "'alive'",
        ],
        limits,
    )
    assert [c.status for c in out] == ["error", "ok", "error", "ok", "ok", "ok"]
    assert out[0].error == "MemoryError"
    assert out[1].stdout.startswith("fork refused after") and out[1].value == "True"
    assert (out[2].error or "").startswith("OSError: [Errno 28]")  # the private /tmp is full
    assert len(out[3].stdout) == 1000 and out[3].cut["stdout"] >= 4_000_000
    assert len(out[4].stderr) == 1000 and out[4].cut["stderr"] >= 19_000_000
    assert "1000 characters, " in out[3].reply()
    assert out[5].value == "'alive'"


async def test_a_cell_that_abuses_the_channel_breaks_only_its_own_lab() -> None:
    writers = (
        "import os\nfor fd in range(3, 12):\n    try:\n        os.write(fd, {data})\n"
        "    except OSError:\n        pass\n"
    )
    out = await run(
        [
            writers.format(data="b'{' + b'a' * (40 * 1024 * 1024) + b'\\n'"),  # over MAX_FRAME
            writers.format(data='b\'{"op": "done", "id": 99}\\n\''),  # not this cell's
            writers.format(data="b'not json\\n'"),
            "with open('/proc/1/fd/1', 'wb') as ch:\n"
            '    ch.write(b\'{"op": "call", "cell": 7, "id": 1, "command": "x", "arguments": {}}\\n\')',
            "import fcntl, os\nfor fd in range(16):\n    try:\n"
            "        fcntl.fcntl(fd, fcntl.F_SETFL, os.O_NONBLOCK)\n    except OSError:\n"
            "        pass\nkept = 'yes'",
            "print('seen')\nkept",  # the kernel waits on its non-blocking fds instead of failing
        ]
    )
    assert [c.status for c in out] == ["restarted"] * 4 + ["ok", "ok"]
    assert (out[5].stdout, out[5].value) == ("seen\n", "'yes'")
    assert "on its channel (at most" in (out[0].error or "")
    assert out[1].error == "the lab sent 'done' out of turn on its channel"
    assert "invalid message on its channel" in (out[2].error or "")
    assert out[3].error == "the lab sent 'call' out of turn on its channel"


async def test_target_calls_send_words_and_return_values() -> None:
    calls = Calls()
    limits = LabLimits(max_calls_per_cell=3)
    out = await run(
        [
            "import numpy as np\nfrom target import call_function, f, TargetError, "
            "BudgetExhausted\nprint(call_function([1, 2.5, np.float64(3), 'bad']))\n"
            "print(f(np.float32(0.5)), call_function(np.arange(2)))",
            "try:\n    call_function(['refuse'])\nexcept TargetError as e:\n    print('refused:', e)\n"
            "try:\n    call_function(['budget'])\nexcept BudgetExhausted as e:\n    print('budget:', e)\n"
            "try:\n    for _ in range(2):\n        f(1)\nexcept TargetError as e:\n"
            "    print('capped:', e)",
        ],
        limits,
        calls,
    )
    assert [c.status for c in out] == ["ok", "ok"], out[1].traceback
    assert out[0].stdout.splitlines() == ["[2.0, 5.0, 6.0, None]", "1.0 [0.0, 2.0]"]
    assert "target: input 'bad': not a number" in out[0].stderr
    assert [f.arguments for f in calls.frames[:3]] == [
        {"inputs": ["1", "2.5", "3", "bad"]},
        {"inputs": ["0.5"]},
        {"inputs": ["0", "1"]},
    ]
    assert out[1].stdout.splitlines() == [
        "refused: not that one",
        "budget: spent",
        "capped: more than 3 target calls in one cell",
    ]
    assert len(calls.frames) == 6  # the capped call never reached the orchestrator's handler


def test_reply_of_a_restarted_cell_names_the_loss() -> None:
    c = Cell(number=4, code="x", status="restarted", error="the lab ran out of memory")
    text = c.reply()
    assert text.startswith("Response: cell 4 was stopped (0 target calls); " + LOST)
    assert "error (25 characters):\nthe lab ran out of memory\n" in text
