"""A benchmark's commands, declared once (`ToolSpec`), and their text rendering.

Each benchmark declares its commands as data: a name, what it does, the JSON schema of its
arguments, what it returns, and how it reads as FIND text. Three renderings come from that one
declaration:
- the text protocol: a `call` command is `PYTHON(<script> <words>)` (`to_words` / `match_words`),
  the `answer` command is the tagged final message (`to_answer` / `from_answer`);
- native tool calls (the openai and anthropic agents render the specs as their API's tools);
- MCP tools (`harness mcp serve`).
In protocol mode `tools` the harness runs a tool call by rendering it as the text command it
stands for, so a tool result is byte for byte the reply the text protocol gives, and the answer
is scored from its rendered text by the same scorers.

This module is data plus pure functions: agents (and the agent host) import it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from interp_harness.agents.toolspec import SUBMIT, AnswerTag, ToolCall, ToolSpec, Word

__all__ = [
    "SUBMIT",
    "AnswerTag",
    "ToolCall",
    "ToolSpec",
    "Word",
    "answer_spec",
    "by_name",
    "from_answer",
    "match_words",
    "to_answer",
    "to_words",
]


# ---- call commands ----------------------------------------------------------------------------


def _word(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def to_words(spec: ToolSpec, arguments: Mapping[str, Any]) -> list[str]:
    """The words (inputs) of the text command a call stands for."""
    words: list[str] = []
    for w in spec.words:
        if w.literal is not None:
            words.append(w.literal)
            continue
        assert w.arg is not None
        if w.arg not in arguments or arguments[w.arg] is None:
            continue
        value = arguments[w.arg]
        if w.flag is not None:
            words.append(w.flag)
        words.extend(_word(v) for v in value) if isinstance(value, list) else words.append(
            _word(value)
        )
    return words


def _convert(value: str, schema: Mapping[str, Any]) -> Any:
    for option in schema.get("anyOf", ()):  # the first alternative that reads the word
        try:
            converted = _convert(value, option)
        except ValueError:
            continue
        if "const" not in option or option["const"] == converted:
            return converted
    kind = schema.get("type")
    if kind == "integer":
        return int(value)
    if kind == "number":
        return float(value)
    return value


def match_words(specs: Sequence[ToolSpec], words: Sequence[str]) -> ToolCall | None:
    """The call a text command's words stand for (the inverse of `to_words`), or None when no
    call command reads them. A command whose first word is a literal is matched on it; the
    benchmark's call command without a literal takes any other words."""
    calls = [s for s in specs if s.kind == "call"]
    fixed = [s for s in calls if s.words and s.words[0].literal is not None]
    spec = next((s for s in fixed if words and words[0] == s.words[0].literal), None)
    if spec is None:
        spec = next((s for s in calls if s not in fixed), None)
        if spec is None:
            return None
        rest = list(words)
    else:
        rest = list(words[1:])
    props = spec.parameters.get("properties", {})
    flags = {w.flag: w for w in spec.words if w.flag is not None}
    positional = [w for w in spec.words if w.arg is not None and w.flag is None]
    args: dict[str, Any] = {}
    current: Word | None = None  # the flag whose values are being read
    pos = 0
    try:
        for word in rest:
            if word in flags:
                current = flags[word]
                continue
            target = current
            if target is None:
                if pos >= len(positional):
                    return None
                target = positional[pos]
                if props.get(target.arg, {}).get("type") != "array":
                    pos += 1
            assert target.arg is not None
            schema = props.get(target.arg, {})
            if schema.get("type") == "array":
                args.setdefault(target.arg, []).append(_convert(word, schema.get("items", {})))
            else:
                args[target.arg] = _convert(word, schema)
    except ValueError:
        return None
    return ToolCall(id="text", name=spec.name, arguments=args)


# ---- the answer -------------------------------------------------------------------------------


def _answer_value(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return json.dumps(value)


def to_answer(spec: ToolSpec, arguments: Mapping[str, Any]) -> str:
    """The final message an answer call stands for, with the benchmark's tags (FIND's exact
    tokens: `[TAG]: value`, code as `[CODE]: ` and a fenced block)."""
    lines = []
    for t in spec.tags:
        value = arguments.get(t.arg)
        if value is None:
            continue
        if t.fence:
            lines.append(f"{t.tag}: \n```python\n{str(value).strip()}\n```")
        else:
            lines.append(f"{t.tag}: {_answer_value(value)}")
    return "\n".join(lines) + "\n"


def from_answer(spec: ToolSpec, text: str) -> dict[str, Any]:
    """The arguments of the answer call a tagged final message stands for (the inverse of
    `to_answer` on what it writes): each tag's text up to the next tag."""
    found = sorted(
        (i, t) for t in spec.tags if (i := text.find(t.tag)) >= 0
    )  # by position in the text
    props = spec.parameters.get("properties", {})
    args: dict[str, Any] = {}
    for n, (i, t) in enumerate(found):
        end = found[n + 1][0] if n + 1 < len(found) else len(text)
        value = text[i + len(t.tag) : end].removeprefix(":").strip()
        if t.fence:
            value = value.split("```python", 1)[-1].split("```", 1)[0].strip()
        schema = props.get(t.arg, {})
        if schema.get("type") == "array":
            items = schema.get("items", {})
            try:
                args[t.arg] = [_convert(v.strip(), items) for v in value.split(",") if v.strip()]
            except ValueError:
                args[t.arg] = value
        elif schema.get("type") == "object":
            try:
                args[t.arg] = json.loads(value)
            except ValueError:
                args[t.arg] = value
        else:
            try:
                args[t.arg] = _convert(value, schema)
            except ValueError:
                args[t.arg] = value
    return args


def answer_spec(specs: Sequence[ToolSpec]) -> ToolSpec | None:
    return next((s for s in specs if s.kind == "answer"), None)


def by_name(specs: Sequence[ToolSpec]) -> dict[str, ToolSpec]:
    return {s.name: s for s in specs}
