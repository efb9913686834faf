"""Task and system prompts of the FIND text protocol (FIND's
`collect_interpretations.py`, `call_interpreter.py` and `prompts/*.txt`).

The task prompt per family is FIND's original prompt file when the data directory holds it
(`find/prompts/interpreter/<prompt_family>.txt`, fetched by `harness data fetch find`). Otherwise
we use our own prompts below: they carry the same instructions (same command syntax, same answer
tags, same value range) in our own words, because the project does not ship FIND's text.

The system prompt: in `find-compat` mode it is FIND's, verbatim, from the data directory
(`find/prompts/interpreter/system.txt`, which `harness data fetch find` derives from FIND's
`collect_interpretations.py`: the text every model got, its misspelling included). In `default`
mode, and in `find-compat` mode when that file is missing (a warning says so), it is our own
wording below. `HARNESS_SYSTEM_PROMPT_FILE` (set by the operator) overrides both.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path

from agents.protocol import Mode
from function_store.datasets import DataUnavailable, data_path
from function_store.models import PromptFamily

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


def system_prompt_source(mode: Mode = "default") -> tuple[str, str]:
    """(system prompt, source): source is "file" (HARNESS_SYSTEM_PROMPT_FILE), "find" (FIND's
    text from the data directory, find-compat mode) or "own"."""
    path = os.environ.get("HARNESS_SYSTEM_PROMPT_FILE")
    if path:
        return Path(path).read_text(encoding="utf-8"), "file"
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


def system_prompt(mode: Mode = "default") -> str:
    """The system prompt of an episode in protocol mode `mode` (see the module docstring)."""
    return system_prompt_source(mode)[0]


_OPENING = "Hi, your job is to interpret a function f(x) implemented in the {DIR2FUNC} script. "

_NUMERIC = (
    _OPENING + "f(x) takes numerical inputs.\n"
    "The only thing you can do is call f(x) on a value of x by running PYTHON({DIR2FUNC} value).{MLP}\n"
    "Describe the function implemented by f(x) by running experiments on it.\n"
    "You can call it on several inputs at once by running "
    "PYTHON({DIR2FUNC} value1 value2 value3 ...).\n"
    "You may call it several times on the same input. Test a wide range of values before you "
    "write a description; you can test values between [-128 and 128].\n"
    "The output may be noisy. Aim for a good, simple description of f(x) that explains most of "
    "its behaviour; f(x) may combine several different operations.\n"
    "Inside the domain there may be an interval where the function behaves differently. If so, "
    "describe that interval.\n"
    "Your description of the function must have three parts.\n"
    "First, [DESCRIPTION]: Describe in language what the function does.\n"
    "[DOMAIN]: What is the domain of the function? Is there an interval where the function "
    "behaves unexpectedly? What are the numeric bounds of that interval, and what happens there?\n"
    "[CODE]: Write python code that approximates the behaviour of the function."
)

_STRINGS = (
    _OPENING + "f(x) takes string inputs.\n"
    "The only thing you can do is call f(x) on an input string by running "
    "PYTHON({DIR2FUNC} string).\n"
    "Describe the function implemented by f(x) by running experiments on it.\n"
    "You can call it on several inputs at once by running "
    "PYTHON({DIR2FUNC} string1 string2 string3 ...).\n"
    "Test a wide range of inputs before you write a description.\n"
    "Aim for a good, simple description of f(x) that explains most of its behaviour; f(x) may "
    "combine several different operations.\n"
    "Give your description of the function in this form.\n"
    "[DESCRIPTION]: Describe in language what the function does.\n"
    "[CODE]: Write python code that approximates the behaviour of the function."
)

_ENTITIES = (
    _OPENING + "f(x) takes word inputs and returns a value between 0 and 1; a value closer to 1 "
    "means the word is associated with a particular concept.\n"
    "Your task is to find out which concept that is. f(x) may be selective for more than one "
    "concept; if so, describe every concept it is selective for.\n"
    "Describe the function implemented by f(x) by running experiments on it. Test a diverse, "
    "random selection of words from many categories: common and rare, concrete and abstract.\n"
    "You can call it on several inputs at once by running "
    "PYTHON({DIR2FUNC} word1 word2 word3 ...).\n"
    "Run many tests before you write a description.\n"
    "Aim for a good, simple description of f(x) that explains most of its behaviour.\n"
    "Give your description of the function in this form.\n"
    "[DESCRIPTION]: Describe in language what the function does."
)

_RELATIONS = (
    _OPENING + "f(x) takes word inputs and applies a rule to the input word.\n"
    "Describe the rule implemented by f(x) by running experiments on it. Test a diverse "
    "selection of words covering real-world concepts such as places, events and people.\n"
    "You can call it on several inputs at once by running "
    "PYTHON({DIR2FUNC} word1 word2 word3 ...).\n"
    "Run many tests before you write a description.\n"
    "Aim for a good, simple description of f(x) that explains most of its behaviour. For some "
    "inputs the function may not behave the way its rule suggests; if so, describe the part of "
    "the domain where the usual rule does not hold.\n"
    "Your description of the function must have two parts.\n"
    "[DESCRIPTION]: Describe in language the rule the function applies.\n"
    "[DOMAIN]: Is there a part of the domain where the usual rule does not hold? If so, describe "
    "that corruption. If not, describe the domain where the rule applies."
)

# Neuron targets (Huang et al. 2023): the same text for every neuron, so nothing names it.
_NEURONS = (
    "Hi, your job is to interpret a neuron of a language model, implemented in the "
    "./temp/neuron.py script. The script takes texts, runs the model on each and prints every "
    "token of the text followed by the neuron's activation on it in parentheses, then the "
    "largest activation over the text, for example: The(0.00) cat(2.31) sat(0.10) [max 2.31].\n"
    "Run it on several texts at once, each in quotes: "
    'PYTHON(./temp/neuron.py "text one" "text two" ...).\n'
    "Find out on which tokens, words or phrases the neuron activates (a value above 0) and on "
    "which it does not. Test many varied texts before you write a description.\n"
    "Give your description in this form.\n"
    "[DESCRIPTION]: Describe the strings the neuron activates on; quote typical words or "
    'phrases, e.g. fires on "Monday", "Friday" and other names of weekdays.'
)

# RAVEL localisation targets: the same text for every target; `task` names the attribute.
_RAVEL = (
    "Hi, your job is to localise an attribute of entities inside a language model, which you can "
    "query through the ./temp/model.py script. Start with PYTHON(./temp/model.py task): it names "
    "the entity type, the attribute to localise, the other attributes, and train entities and "
    "prompt templates you may use. Then run experiments:\n"
    'PYTHON(./temp/model.py activations "text one" "text two" --layer 8 --top 16) prints, for '
    "each text, the residual-stream dims of that layer with the largest |value| at the text's "
    "last token, as dim(value);\n"
    'PYTHON(./temp/model.py interchange "%s is a city in the country of" Berlin Rome --layer 8 '
    "--neurons 3 17 250 --tokens 3) prints the model's next tokens on the template filled with "
    "the first entity, before and after those dims at the first entity's last token are copied "
    "from the same position of the template filled with the second entity.\n"
    "Find a layer and a small set of dims that carry the attribute: copying them should change "
    "the model's answer about that attribute to the second entity's value, and leave its answers "
    "about the other attributes unchanged. You are scored on entities you have not seen.\n"
    "Give your answer in this form (the [DESCRIPTION] line ends the experiment).\n"
    "[DESCRIPTION]: a sentence on how you found the dims.\n"
    "[LAYER]: 8\n"
    "[NEURONS]: 3, 17, 250\n"
    "Instead of [LAYER] and [NEURONS] you may upload a featurizer of that layer's residual stream: "
    '[FEATURIZER]: {"kind": "rotation", "layer": 8, "arrays": {"weight": {"shape": [k, n], '
    '"dtype": "float32", "data": "<base64 of the little-endian floats>"}}} (k orthonormal rows, '
    "the features that carry the attribute; kinds mask and autoencoder are accepted too)."
)

OWN_PROMPTS: dict[str, str] = {
    "numeric": _NUMERIC.replace("{MLP}", ""),
    "numeric_mlp": _NUMERIC.replace("{MLP}", " f(x) is implemented by an MLP."),
    "strings": _STRINGS,
    "neurons_entities": _ENTITIES,
    "neurons_relations": _RELATIONS,
    "neurons": _NEURONS,
    "ravel": _RAVEL,
}


def prompt_template(prompt_family: PromptFamily | str) -> tuple[str, str]:
    """(template text, source) where source is "find" (original file) or "own"."""
    if prompt_family not in OWN_PROMPTS:
        raise KeyError(f"no prompt for prompt family {prompt_family!r}")
    try:
        path = data_path(f"find/prompts/interpreter/{prompt_family}.txt")
        return path.read_text(encoding="utf-8"), "find"
    except DataUnavailable:
        return OWN_PROMPTS[prompt_family], "own"


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
