"""Task and system prompts of the FIND text protocol (FIND's
`collect_interpretations.py`, `call_interpreter.py` and `prompts/*.txt`).

The task prompt per family is FIND's original prompt file when the data directory holds it
(`find/prompts/interpreter/<prompt_family>.txt`, fetched by `harness data fetch find`). Otherwise
we use the family's own prompt, which its benchmark record names (`prompt`: a mapping of prompt
family to template in the family's module): the same instructions (same command syntax, same
answer tags, same value range) in our own words, because the project does not ship FIND's text.

The system prompt: in `find-compat` mode it is FIND's, verbatim, from the data directory
(`find/prompts/interpreter/system.txt`, which `harness data fetch find` derives from FIND's
`collect_interpretations.py`: the text every model got, its misspelling included). In `default`
mode, and in `find-compat` mode when that file is missing (a warning says so), it is our own
wording below. `HARNESS_SYSTEM_PROMPT_FILE` (set by the operator) overrides both.

In `tools` mode the system prompt says the commands are tools (`TOOLS_SYSTEM_PROMPT`), and the
task prompt, unchanged, is followed by a note mapping its `PYTHON(...)` commands and answer tags
to the tools (`tools_note`, written from the benchmark's declared commands).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from interp_harness.agents.protocol import Mode
from interp_harness.agents.toolspec import ToolSpec
from interp_harness.function_store.benchmark import benchmarks, load_ref
from interp_harness.function_store.datasets import DataUnavailable, data_path
from interp_harness.function_store.models import PromptFamily

_log = logging.getLogger(__name__)
FIND_SYSTEM_PROMPT = "find/prompts/interpreter/system.txt"

# FIND copies the function to ./temp/function.py and names that path in the prompt; we keep the
# path text even though no file exists there (the agent only ever sees outputs).
DIR2FUNC = "./temp/function.py"
EXEMPLAR_HINT = "\nWe advise you to start with the following words: "

SYSTEM_PROMPT = (
    "You can use commands to carry out the user's request; they run on the user's machine. "
    'End every message you send with "COMMAND: " followed by the command you want to run. '
    "The available command is:\n"
    "PYTHON(function.py) - runs the python script with the given file name. Quote the file name "
    "argument if needed, but do not put quotes around the command itself.\n"
    "\n"
    'After you use a command, the user answers with "Response: " followed by what the command '
    "printed. Use that output to help complete the user's request."
)


TOOLS_SYSTEM_PROMPT = (
    "You are a helpful assistant that interprets an opaque system by running experiments on it. "
    "You run an experiment by calling one of the tools you are given; each tool's result is "
    "what the experiment printed. You may call several tools in one message. When you are done, "
    "call submit_answer with your final answer: that ends the session."
)


def tools_note(tools: Sequence[ToolSpec]) -> str:
    """What follows the task prompt in `tools` mode: which tool stands for which command."""
    lines = [
        "",
        "",
        "In this session you run the commands above by calling tools instead of writing "
        "PYTHON(...):",
    ]
    for t in tools:
        if t.kind == "answer":
            tags = ", ".join(f"{a.tag} as `{a.arg}`" for a in t.tags)
            lines.append(f"- {t.name}: your final answer ({tags}); it ends the session.")
        else:
            args = ", ".join(f"`{w.arg}`" for w in t.words if w.arg) or "no arguments"
            lines.append(f"- {t.name} ({args}): {t.description}")
    return "\n".join(lines)


def system_prompt_source(mode: Mode | Literal["tools"] = "default") -> tuple[str, str]:
    """(system prompt, source): source is "file" (HARNESS_SYSTEM_PROMPT_FILE), "find" (FIND's
    text from the data directory, find-compat mode) or "own"."""
    path = os.environ.get("HARNESS_SYSTEM_PROMPT_FILE")
    if path:
        return Path(path).read_text(encoding="utf-8"), "file"
    if mode == "tools":
        return TOOLS_SYSTEM_PROMPT, "own"
    if mode == "find-compat":
        try:
            return data_path(FIND_SYSTEM_PROMPT).read_text(encoding="utf-8"), "find"
        except DataUnavailable:
            _log.warning(
                "find-compat mode without FIND's system prompt (%s is not in the data directory; "
                "`harness data fetch find` derives it): using the project's own wording",
                FIND_SYSTEM_PROMPT,
            )
    return SYSTEM_PROMPT, "own"


def system_prompt(mode: Mode | Literal["tools"] = "default") -> str:
    """The system prompt of an episode in protocol mode `mode` (see the module docstring)."""
    return system_prompt_source(mode)[0]


def own_prompts() -> dict[str, str]:
    """Every registered family's own templates by prompt family (the record's `prompt` names a
    mapping in the family's module)."""
    out: dict[str, str] = {}
    for record in benchmarks():
        if record.prompt:
            out.update(load_ref(record.prompt))
    return out


def prompt_template(prompt_family: PromptFamily | str) -> tuple[str, str]:
    """(template text, source) where source is "find" (original file) or "own"."""
    own = own_prompts()
    if prompt_family not in own:
        raise KeyError(f"no prompt for prompt family {prompt_family!r}")
    try:
        path = data_path(f"find/prompts/interpreter/{prompt_family}.txt")
        return path.read_text(encoding="utf-8"), "find"
    except DataUnavailable:
        return own[prompt_family], "own"


def task_prompt(prompt_family: PromptFamily | str, exemplars: Sequence[str] | None = None) -> str:
    """The first user message. With exemplars, FIND's "start with these words" hint is appended
    with the list written as FIND writes initial.json (json.dumps defaults)."""
    template, _ = prompt_template(prompt_family)
    # FIND fills the placeholder with str.format; a plain replace gives the same text and cannot
    # trip over other braces.
    text = template.replace("{DIR2FUNC}", DIR2FUNC)
    if exemplars:
        text += EXEMPLAR_HINT + json.dumps(list(exemplars))
    return text
