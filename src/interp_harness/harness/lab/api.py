"""The `target` module of a lab, written from the benchmark's declared commands: a fourth
rendering of the one declaration (beside the text protocol, native tools and MCP).

Each `call` command becomes a Python function of the same name whose parameters are the
command's arguments (required ones first). A command whose one argument is a list of texts, one
word each (FIND's `call_function(inputs)`, `read_activations(texts)`), takes any sequence, or one
value (then it returns one value); its values are turned into words as a number or a text reads
(`2` for 2.0, `0.1` for 0.1). The first such command is also `f`. A function sends its
arguments to the orchestrator and returns what comes back: one value per input for a list
command, else the call's one value. A value is the output as the text reply prints it, read as
the command's declaration says (`ToolSpec.value`: the text, a number, JSON, a numpy array, a list
of numpy arrays): a cell learns the same values a text agent reads.

The orchestrator's side of a call (`call_value`) turns a target call's outputs into that value.
A new benchmark's commands get their functions with no code of their own.
"""

from __future__ import annotations

import json
import keyword
from collections.abc import Sequence
from typing import Any

from interp_harness.agents.protocol.values import parse_value
from interp_harness.agents.toolspec import ToolSpec, Word

MAX_INPUT_ERRORS = 20  # per-input errors sent back with one call (the rest are counted)


def list_arg(spec: ToolSpec) -> str | None:
    """The argument of a list command (one array of texts, one word per item), else None."""
    props = spec.parameters.get("properties", {})
    if len(props) != 1:
        return None
    (name,) = props
    schema = props[name]
    if schema.get("type") != "array" or schema.get("items", {}).get("type") != "string":
        return None
    return name if spec.words == (Word(arg=name),) else None


def call_commands(specs: Sequence[ToolSpec]) -> list[ToolSpec]:
    return [s for s in specs if s.kind == "call"]


# ---- the lab's side: the module's source ------------------------------------------------------

_PRELUDE = '''
import numbers as _numbers

import labchannel as _channel
from labchannel import BudgetExhausted, TargetError

__all__ = ["BudgetExhausted", "TargetError", {names}]


def _word(x):
    """One input as the word a text command would hold."""
    if isinstance(x, str):
        return x
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, _numbers.Integral):
        return str(int(x))
    if isinstance(x, _numbers.Real):
        v = float(x)
        if v == v and abs(v) < 1e15 and v.is_integer():
            return str(int(v))
        return repr(v)
    return str(x)


def _words(values):
    """(one value given?, the words)."""
    if isinstance(values, str | bytes | _numbers.Number):
        return True, [_word(values)]
    if hasattr(values, "tolist"):  # a numpy array or scalar
        values = values.tolist()
        if not isinstance(values, list):
            return True, [_word(values)]
    return False, [_word(v) for v in values]


def _plain(v):
    """An argument as plain JSON (numpy values, tuples and ranges as lists)."""
    if hasattr(v, "tolist"):
        return v.tolist()
    if isinstance(v, tuple | range | set):
        return [_plain(x) for x in v]
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {{str(k): _plain(x) for k, x in v.items()}}
    return v


def _shape(v):
    """The shape of nested lists, or None when they differ in length (ragged)."""
    if not isinstance(v, list):
        return ()
    shapes = {{_shape(x) for x in v}}
    if len(shapes) > 1 or None in shapes:
        return None
    return (len(v), *next(iter(shapes), ()))


def _leaves(v):
    if isinstance(v, list):
        for x in v:
            yield from _leaves(x)
    else:
        yield v


def _array(v):
    """A JSON value as a numpy array: numbers (null as NaN) as floats, anything else (tokens) as
    an object array (null as None); a ragged list as a list of arrays, one per item."""
    if not isinstance(v, list):
        return v
    try:
        import numpy
    except ImportError:  # the operator left numpy out of the lab: the JSON value itself
        return v
    if _shape(v) is None:
        return [_array(x) for x in v]
    numbers = all(
        x is None or (isinstance(x, int | float) and not isinstance(x, bool)) for x in _leaves(v)
    )
    return numpy.array(v, dtype=float if numbers else object)


def _value(v):
    if isinstance(v, dict) and set(v) == {{"__complex__"}}:
        re, im = v["__complex__"]
        return complex(re, im)
    if isinstance(v, dict) and set(v) == {{"__array__"}}:
        return _array(v["__array__"])
    if isinstance(v, list):
        return [_value(x) for x in v]
    return v
'''


def _ident(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("_")


def _doc(spec: ToolSpec) -> str:
    return spec.tool_description()


def _function(spec: ToolSpec) -> str:
    doc = _doc(spec)
    arg = list_arg(spec)
    if arg is not None:
        return (
            f"def {spec.name}({arg}):\n"
            f"    {doc!r}\n"
            f"    single, words = _words({arg})\n"
            f"    out = _value(_channel.call({spec.name!r}, {{{arg!r}: words}}))\n"
            "    return out[0] if single else out\n"
        )
    props = spec.parameters.get("properties", {})
    required = [p for p in spec.parameters.get("required", []) if p in props]
    optional = [p for p in props if p not in required]
    if not all(_ident(p) for p in props):
        return (
            f"def {spec.name}(**arguments):\n"
            f"    {doc!r}\n"
            f"    return _value(_channel.call({spec.name!r}, _plain(arguments)))\n"
        )
    params = [*required, *(f"{p}=None" for p in optional)]
    body = ["    arguments = {}"]
    for p in required:
        body.append(f"    arguments[{p!r}] = _plain({p})")
    for p in optional:
        body.append(f"    if {p} is not None:\n        arguments[{p!r}] = _plain({p})")
    body.append(f"    return _value(_channel.call({spec.name!r}, arguments))")
    return f"def {spec.name}({', '.join(params)}):\n    {doc!r}\n" + "\n".join(body) + "\n"


def module_source(specs: Sequence[ToolSpec]) -> str:
    """The `target` module for a benchmark's commands."""
    calls = call_commands(specs)
    first_list = next((s for s in calls if list_arg(s) is not None), None)
    names = [s.name for s in calls] + (["f"] if first_list is not None else [])
    lines = [_overview(calls, first_list)]
    lines.append(_PRELUDE.format(names=", ".join(repr(n) for n in names)))
    for s in calls:
        lines.append("\n" + _function(s))
    if first_list is not None:
        lines.append(f"\nf = {first_list.name}\n")
    return "\n".join(lines)


def _overview(calls: Sequence[ToolSpec], first_list: ToolSpec | None) -> str:
    doc = [
        "The system you study, as Python functions. Each call is one target call of your "
        "session, counted and recorded like a command; it returns the values a command's reply "
        "would show (None where an input failed; the reason is printed on stderr).",
        "",
    ]
    for s in calls:
        doc.append(f"{signature(s)}: {s.description}")
    if first_list is not None:
        doc.append(f"f(x): the same as {first_list.name}(x)")
    return repr("\n".join(doc))


def signature(spec: ToolSpec) -> str:
    """How the function reads: `call_function(inputs)`, `activations(texts, layer=None, ...)`."""
    arg = list_arg(spec)
    if arg is not None:
        return f"{spec.name}({arg})"
    props = spec.parameters.get("properties", {})
    if not all(_ident(p) for p in props):
        return f"{spec.name}(**arguments)"
    required = [p for p in spec.parameters.get("required", []) if p in props]
    optional = [f"{p}=None" for p in props if p not in required]
    return f"{spec.name}({', '.join([*required, *optional])})"


# ---- the orchestrator's side: a call's outputs as the value the cell gets ---------------------


# The lab's `_value` turns {"__array__": v} into a numpy array (the frame itself is JSON).
ARRAY = "__array__"


def _read(kind: str, text: str) -> Any:
    if kind in ("array", "arrays"):
        v = _read("json", text)
        if not isinstance(v, list):
            return v  # not an array (a text that is not JSON): as a "json" command reads it
        if kind == "arrays":
            return [{ARRAY: x} if isinstance(x, list) else x for x in v]
        return {ARRAY: v}
    if kind == "number":
        v = parse_value(text)
        if isinstance(v, complex):
            return {"__complex__": [v.real, v.imag]}
        return v
    if kind == "json":
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def returns_note(spec: ToolSpec) -> str | None:
    """What the lab's function returns, for the prompt, when numpy arrays (else None)."""
    if spec.value == "array":
        return (
            "Returns numpy arrays: numbers as floats (NaN where a reply shows null), other "
            "values as object arrays (None there)."
        )
    if spec.value == "arrays":
        return (
            "Returns a list of numpy arrays, one per item of the reply, since the items may "
            "differ in length (numbers as floats with NaN where a reply shows null, other values "
            "as object arrays)."
        )
    return None


def call_value(spec: ToolSpec, outputs: Sequence[Any]) -> tuple[Any, list[dict[str, str]]]:
    """(the value a cell gets, the per-input errors) for a call's outputs (`CallOutput`s)."""
    values: list[Any] = []
    errors: list[dict[str, str]] = []
    for o in outputs:
        if o.output is None:
            values.append(None)
            if o.error is not None and len(errors) < MAX_INPUT_ERRORS:
                errors.append({"input": str(o.input)[:200], "error": str(o.error)[:500]})
        else:
            values.append(_read(spec.value, o.output))
    if list_arg(spec) is not None or len(values) != 1:
        return values, errors
    return values[0], errors
