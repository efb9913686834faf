"""What the task prompt says about the lab in protocol modes `code` and `code-tools`, written
from the benchmark's declared commands and the operator's limits."""

from __future__ import annotations

from collections.abc import Sequence

from interp_harness.agents.protocol.cells import RUN_PYTHON
from interp_harness.agents.protocol.tools import answer_spec
from interp_harness.agents.toolspec import ToolSpec
from interp_harness.harness.lab.api import call_commands, list_arg, returns_note, signature
from interp_harness.harness.lab.limits import LabLimits


def lab_note(commands: Sequence[ToolSpec], limits: LabLimits, *, tools: bool) -> str:
    """The paragraph appended to the task prompt (after the tools note in `code-tools`)."""
    calls = call_commands(commands)
    how = (
        f"call the tool {RUN_PYTHON} with Python code: each call runs as a cell"
        if tools
        else "write Python code in a fenced block that starts with a line ```python and ends "
        "with a line ```: each block of your message runs as a cell, in order"
    )
    names = [s.name for s in calls]
    first = next((s for s in calls if list_arg(s) is not None), None)
    if first is not None:
        names.append("f")
    lines = [
        "",
        "",
        f"In this session you also have a Python lab. To use it, {how}, in one Python process "
        "that keeps its variables from one cell to the next (numpy, scipy and matplotlib are "
        "installed; there is no network). Its module `target` runs the experiments above as "
        f"Python functions (from target import {', '.join(names)}):",
    ]
    for s in calls:
        lines.append(f"- {signature(s)}: {s.description}")
        if list_arg(s) is not None:
            lines.append(
                "  Takes a list (or a numpy array) of inputs and returns one value per input "
                "(or one input, and returns its value); None where an input failed."
            )
        if (note := returns_note(s)) is not None:
            lines.append(f"  {note}")
    if first is not None:
        lines.append(f"- f(x): the same as {first.name}(x)")
    lines += [
        "Each call of a target function counts as one command. The reply to each cell shows "
        "what it printed (stdout and stderr), the value of its last line, and any error with "
        "its traceback, each cut to "
        f"{limits.max_output_chars:,} characters.",
        f"Limits of one cell: {limits.cell_cpu_s:g} s of CPU time, {limits.cell_wall_s:g} s of "
        f"wall time (target calls not counted), {limits.max_calls_per_cell:,} target calls; "
        f"the lab has {limits.memory_mb:,} MB of memory and {limits.tmp_mb:,} MB in /tmp. A cell "
        "that breaks a limit is stopped; when the lab has to be restarted, its variables are "
        "lost and the reply says so.",
    ]
    if not tools:
        lines.append("A message that gives your final answer runs no cells.")
    answer = answer_spec(commands)
    fenced = [t for t in answer.tags if t.fence] if answer is not None else []
    for t in fenced:
        where = f"the `{t.arg}` argument of {answer.name}" if tools and answer else t.tag
        lines.append(
            f"As {where} you may give a function you defined in the lab: write lab:NAME (for "
            "example lab:f) and its source is submitted, with the values and functions of the "
            "lab it uses."
        )
    return "\n".join(lines)
