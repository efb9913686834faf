"""A cell's matplotlib figures (issue 42 item 5): rendered as PNG by the kernel in a real bwrap
lab, within the operator's caps, then closed; checked by the orchestrator (signature, IHDR,
size) before anything stores or sends them, so that a hostile cell's forged blobs are refused
and named in the reply with nothing stored; stored in `lab_figures` with the cell's reply and
given to the agent as image parts beside the reply's `[figure 1: 640x480 PNG]` line."""

from __future__ import annotations

import base64
import struct
import zlib

import orch_plugin  # noqa: F401  (registers the orch-test targets)
import pytest
from lab_test_agents import CellScriptAgent
from support.orch_helpers import run_in_process

from interp_harness.agents.protocol.cells import parse_cells
from interp_harness.function_store.benchmark import benchmark
from interp_harness.harness.lab.figures import NotAFigure, accept_figures, png_size
from interp_harness.harness.lab.limits import LabLimits
from interp_harness.harness.lab.session import Lab

F0 = "orch-test/numeric/f00000"  # f(x) = 2x + 1
SIGNATURE = b"\x89PNG\r\n\x1a\n"


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width: int, height: int, *, rows: int | None = None) -> bytes:
    """A PNG written by hand (grey, 8 bits): its header says width x height; `rows` image rows
    (all of them by default; a forged header claims more than the data holds)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    raw = b"".join(b"\x00" + b"\x80" * width for _ in range(height if rows is None else rows))
    return (
        SIGNATURE + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    )


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# ---- the orchestrator's check ------------------------------------------------------------------


def test_a_png_is_read_from_its_header_and_anything_else_is_refused() -> None:
    assert png_size(png(3, 2), 10_000) == (3, 2)
    bad_crc = bytearray(png(3, 2))
    bad_crc[30] ^= 1  # inside the IHDR chunk's CRC
    cases = {
        b"GIF89a" + png(3, 2)[6:]: "not a PNG image",
        bytes(bad_crc): "no valid IHDR chunk",
        png(3, 2)[:-12]: "no IEND chunk",
        png(5000, 1, rows=0): "over 4096 a side",
        png(4000, 4000, rows=0): "over 4,194,304 in all",
        png(300, 300): "over the limit of 100",
    }
    for data, why in cases.items():
        with pytest.raises(NotAFigure, match=why):
            png_size(data, 100 if why.startswith("over the limit") else 10_000_000)
    figures, notes = accept_figures(
        ["not base64 !", b64(b"%PDF-1.4"), b64(png(4, 4)), b64(png(5, 5)), b64(png(6, 6))],
        max_figures=2,
        max_bytes=10_000,
    )
    assert [(f.width, f.height) for f in figures] == [(4, 4), (5, 5)]
    assert figures[0].png == png(4, 4)
    assert notes == [
        "[a figure was refused: not base64]",
        "[a figure was refused: not a PNG image]",
        "[a figure was refused: at most 2 are sent per cell]",
    ]


# ---- the kernel, in a real lab -----------------------------------------------------------------

PLOT = (
    "import matplotlib.pyplot as plt\n"
    "plt.plot([0, 1, 2], [1, 3, 5])\n"
    "fig = plt.figure(figsize=(3, 2), dpi=100)\n"
    "fig.gca().bar([1, 2], [3, 4])\n"
    "print('plotted')"
)


@pytest.mark.usefixtures("needs_bwrap")
async def test_the_figures_a_cell_left_open_come_back_as_png_and_are_closed() -> None:
    lab = Lab(benchmark("numeric").commands, LabLimits(max_figures=1))
    try:
        quiet = await lab.run("import sys\n'matplotlib.pyplot' in sys.modules", _no_calls)
        plotted = await lab.run(PLOT, _no_calls)
        after = await lab.run("plt.get_fignums()", _no_calls)
    finally:
        await lab.aclose()
    assert (quiet.value, quiet.figures) == ("False", [])  # a cell without plots pays nothing
    assert plotted.status == "ok" and plotted.stdout == "plotted\n"
    [fig] = plotted.figures  # the operator's cap: one; the other is named on stderr
    assert (fig.width, fig.height) == (640, 480) and fig.png.startswith(SIGNATURE)
    assert png_size(fig.png, 512 * 1024) == (640, 480)
    assert "figure 2 was not sent: at most 1 figures are sent per cell" in plotted.stderr
    reply = plotted.reply()
    assert "[figure 1: 640x480 PNG]\n[end of cell 2]" in reply
    assert parse_cells(reply)[0].stdout == "plotted\n"  # the figure line is no part's text
    assert after.value == "[]"  # closed after the cell


async def _no_calls(frame):  # type: ignore[no-untyped-def]
    raise AssertionError(f"no target call expected: {frame}")


# ---- the episode: stored, sent, and refused when forged --------------------------------------


def cell(code: str) -> str:
    return f"```python\n{code}\n```"


def spec(messages: list[str]) -> dict:  # type: ignore[type-arg]
    return {
        "agent": "lab_test_agents:CellScriptAgent",
        "dataset": "orch-test",
        "ids": [F0],
        "agent_options": {"messages": messages, "answer": "[DESCRIPTION]: affine"},
        "protocol": {"mode": "code"},
        "floor": False,
    }


@pytest.mark.usefixtures("needs_bwrap")
async def test_figures_are_stored_with_the_reply_and_given_to_the_agent(sqlite_url: str) -> None:
    code = (
        "import matplotlib.pyplot as plt\nfrom target import call_function\n"
        "xs = [0, 1, 2]\nplt.plot(xs, call_function(xs))\n"
        "plt.figure(figsize=(3, 2), dpi=100).gca().plot([1, 2])"
    )
    CellScriptAgent.seen.clear()
    store, [run] = await run_in_process(
        sqlite_url, spec([cell(code), cell("1 + 1")]), agent_isolation="none"
    )
    assert run.status == "completed"
    [ep] = store.episodes.of_run(run.id)
    assert (ep.status, ep.target_calls) == ("completed", 1)
    rows = store.lab.figures(ep.id)
    assert [(f.step, f.cell_idx, f.index, f.width, f.height) for f in rows] == [
        (2, 0, 0, 640, 480),
        (2, 0, 1, 300, 200),
    ]
    assert all(png_size(f.png, 1 << 20) == (f.width, f.height) for f in rows)
    reply = store.episodes.messages(ep.id)[3].content
    assert "[figure 1: 640x480 PNG]\n[figure 2: 300x200 PNG]\n[end of cell 1]" in reply
    # the agent got the stored bytes as the reply's images; the next reply has none
    conv = CellScriptAgent.seen[-1]
    assert [m.content for m in conv if m.images] == [reply]
    [with_images] = [m for m in conv if m.images]
    assert [i.png for i in with_images.images] == [f.png for f in rows]
    assert [(i.width, i.height) for i in with_images.images] == [(640, 480), (300, 200)]


# The kernel's figure step replaced from inside a cell: what comes back is whatever the cell says.
FORGE = (
    "import __main__, base64, struct, zlib, matplotlib.pyplot\n"
    "def chunk(k, d):\n"
    "    return struct.pack('>I', len(d)) + k + d + struct.pack('>I', zlib.crc32(k + d))\n"
    "huge = (b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 60000, 60000,"
    " 8, 0, 0, 0, 0)) + chunk(b'IEND', b''))\n"
    "blobs = [base64.b64encode(b).decode() for b in (b'<svg>canary-figure</svg>', huge)]\n"
    "__main__._figures = lambda msg: blobs + ['@@not base64@@']\n"
    "'forged'"
)
TOO_MANY = (
    "import __main__, matplotlib.pyplot\n"
    "__main__._figures = lambda msg: ['AAAA'] * 17\n"  # over the channel's bound of 16
    "'too many'"
)


@pytest.mark.usefixtures("needs_bwrap")
async def test_forged_figures_are_refused_and_nothing_of_them_is_stored(sqlite_url: str) -> None:
    store, [run] = await run_in_process(
        sqlite_url, spec([cell(FORGE), cell(TOO_MANY), cell("'after'")]), agent_isolation="none"
    )
    assert run.status == "completed"
    [ep] = store.episodes.of_run(run.id)
    assert (ep.status, ep.error) == ("completed", None)
    assert store.lab.figures(ep.id) == []
    msgs = store.episodes.messages(ep.id)
    forged = msgs[3].content
    assert "[a figure was refused: not a PNG image]" in forged
    assert "[a figure was refused: 60000x60000 pixels, over 4096 a side]" in forged
    assert "[a figure was refused: not base64]" in forged
    assert "[figure 1" not in forged and "canary-figure" not in forged
    # a frame over the channel's bound breaks the lab (restarted, said so); the episode goes on
    cells = store.lab.cells(ep.id)
    assert [c.status for c in cells] == ["ok", "restarted", "ok"]
    assert "invalid message on its channel" in (cells[1].error or "")
    assert parse_cells(msgs[7].content)[0].parts["value"] == "'after'"


@pytest.mark.parametrize("mode", ["code", "code-tools"])
def test_a_resumed_episode_gives_the_agent_the_stored_figures_again(
    sqlite_url: str, mode: str
) -> None:
    """What a resumed episode rebuilds its conversation from: each stored figure goes back on
    the reply that carried it (mode code: the user message after the cell's message; code-tools:
    the result of the cell's tool call)."""
    from interp_harness.harness.domain.spec import RunSpec
    from interp_harness.harness.episode.runner import EpisodeRunner
    from interp_harness.harness.store import make_engine
    from interp_harness.harness.store.repo import Store

    store = Store(make_engine(sqlite_url))
    run = store.runs.create(RunSpec(agent="x", dataset="orch-test"), [F0])
    row = {"idx": 0, "target_id": F0, "dataset": "orch-test", "family": "numeric"}
    store.episodes.ensure(run.id, [{**row, "variant": "clean"}])
    [ep] = store.episodes.of_run(run.id)
    calls = [{"id": f"c{i}", "name": "run_python", "arguments": {"code": "p()"}} for i in (0, 1)]
    store.episodes.add_messages(
        ep.id,
        [
            {"step": 0, "role": "system", "content": "s"},
            {"step": 1, "role": "user", "content": "task"},
            {"step": 2, "role": "assistant", "content": "cells", "tool_calls": calls},
            {"step": 3, "role": "tool" if mode == "code-tools" else "user", "content": "r0",
             "tool_call_id": "c0"},
            {"step": 4, "role": "tool", "content": "r1", "tool_call_id": "c1"},
        ],
    )  # fmt: skip
    first, second = png(4, 3), png(5, 2)
    store.lab.add_figures(
        ep.id,
        [
            {"step": 2, "cell_idx": 1, "index": 0, "png": first, "width": 4, "height": 3},
            {"step": 2, "cell_idx": 1, "index": 1, "png": second, "width": 5, "height": 2},
        ],
    )
    runner = EpisodeRunner.__new__(EpisodeRunner)  # only what the two methods read
    runner.store, runner.ep, runner.mode = store, ep, mode
    conv = EpisodeRunner._conversation(store.episodes.messages(ep.id), runner._stored_images())
    with_images = {m.content: [i.png for i in m.images] for m in conv if m.images}
    assert with_images == {"r1" if mode == "code-tools" else "r0": [first, second]}


@pytest.mark.usefixtures("needs_bwrap")
async def test_in_code_tools_a_figure_goes_with_its_run_python_result(sqlite_url: str) -> None:
    from figure_agents import PlotToolsAgent

    PlotToolsAgent.seen.clear()
    body = {**spec([]), "agent": "figure_agents:PlotToolsAgent", "agent_options": {}}
    store, [run] = await run_in_process(
        sqlite_url, {**body, "protocol": {"mode": "code-tools"}}, agent_isolation="none"
    )
    [ep] = store.episodes.of_run(run.id)
    assert (ep.status, ep.end_reason) == ("completed", "submit_answer")
    [fig] = store.lab.figures(ep.id)
    assert (fig.step, fig.cell_idx, fig.index, fig.width, fig.height) == (2, 1, 0, 640, 480)
    tools = [m for m in store.episodes.messages(ep.id) if m.role == "tool"]
    assert [(m.step, m.tool_call_id) for m in tools] == [(3, "c0"), (4, "c1")]
    assert "[figure 1: 640x480 PNG]" in tools[1].content
    last = PlotToolsAgent.seen[-1]
    assert [(m.tool_call_id, [i.png for i in m.images]) for m in last if m.role == "tool"] == [
        ("c0", []),
        ("c1", [fig.png]),
    ]
