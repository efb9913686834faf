"""The final answer: written by an agent as FIND asks (`answer`), read by the evaluator into
description / domain / code (`parse_answer`), side by side.

FIND's prompt asks for `[DESCRIPTION]: ...`, `[DOMAIN]: ...` (numeric) and `[CODE]: ` followed by
a fenced Python block. Two readers:
- `find-compat` reproduces FIND's string surgery exactly: the tokens `[DESCRIPTION]: `,
  `[DOMAIN]: ` and `[CODE]: ` (colon *and* space), `rsplit` without maxsplit, and the fenced-block
  rules for code (no fence: no code). The description is what FIND's judge sees: its interpreter
  saves description.txt cut at `[CODE]: `, and its unit-testing script cuts that again at
  `[CODE]:` (no space needed), so `[CODE]:\n...` never reaches the judge.
- `tolerant` (the default) accepts the tags in any case, with or without `: `, and takes the last
  fenced code block (or, with no fence, the text after `[CODE]` when it looks like Python).
Every score records which parser produced its inputs (`ScoreResult.details["parser"]`).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

# ---- writer ----------------------------------------------------------------------------------


def answer(description: str, code: str, domain: str | None = None) -> str:
    """The final message with FIND's exact tokens. `code` defines `f(x)`."""
    parts = [f"[DESCRIPTION]: {description.strip()}"]
    if domain is not None:
        parts.append(f"[DOMAIN]: {domain.strip()}")
    parts.append(f"[CODE]: \n```python\n{code.strip()}\n```")
    return "\n".join(parts) + "\n"


# ---- reader ----------------------------------------------------------------------------------


ParserName = Literal["find-compat", "tolerant"]


class ParsedAnswer(BaseModel):
    parser: ParserName
    description: str
    domain: str
    code: str
    func_name: str | None = None  # the function the scorer will call in `code`


def parse_find_compat(message: str) -> ParsedAnswer:
    r = message
    saved = r.rsplit("[DESCRIPTION]: ")[-1].rsplit("[DOMAIN]: ")[0].rsplit("[CODE]: ")[0]
    description = saved.rsplit("[CODE]:")[0]  # the unit-testing script's second cut
    domain = r.rsplit("[DOMAIN]: ")[-1].rsplit("[CODE]: ")[0]
    c = r.rsplit("[CODE]:")[-1]
    code = ""
    for opener in ("```python", "``` python"):
        if opener in c:
            code = c.rsplit(opener)[-1].split("```")[0]
            break
    else:
        if "```" in c:
            parts = c.rsplit("```", maxsplit=2)
            code = parts[1] if len(parts) > 1 else ""
    return ParsedAnswer(
        parser="find-compat",
        description=description,
        domain=domain,
        code=code,
        func_name=func_name_find_compat(code),
    )


def func_name_find_compat(code: str) -> str | None:
    """FIND's rule (its mse_indicator.py): the text after the *last* `def ` up to the first `(`."""
    if "def " not in code:
        return None
    name = code.rsplit("def ")[-1].split("(")[0].strip()
    return name or None


_TAG = r"\[\s*{name}\s*\]\s*:?[ \t]*"
_TAGS = {
    k: re.compile(_TAG.format(name=k), re.IGNORECASE) for k in ("DESCRIPTION", "DOMAIN", "CODE")
}
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.DOTALL)
_TOP_DEF = re.compile(r"^def\s+([A-Za-z_]\w*)\s*\(", re.MULTILINE)


def _sections(message: str) -> dict[str, str]:
    """Split at the last [DESCRIPTION] and the first [DOMAIN]/[CODE] after it (any case)."""
    last_desc = None
    for m in _TAGS["DESCRIPTION"].finditer(message):
        last_desc = m
    start = last_desc.end() if last_desc else 0
    body = message[start:]
    cuts: list[tuple[int, int, str]] = []
    for key in ("DOMAIN", "CODE"):
        m = _TAGS[key].search(body)
        if m:
            cuts.append((m.start(), m.end(), key))
    cuts.sort()
    out = {"DESCRIPTION": body[: cuts[0][0]] if cuts else body, "DOMAIN": "", "CODE": ""}
    for i, (_, end, key) in enumerate(cuts):
        nxt = cuts[i + 1][0] if i + 1 < len(cuts) else len(body)
        out[key] = body[end:nxt]
    if not out["CODE"]:
        # a [CODE] tag before the last [DESCRIPTION] still counts for code
        last_code = list(_TAGS["CODE"].finditer(message))
        if last_code:
            out["CODE"] = message[last_code[-1].end() :]
    return out


def parse_tolerant(message: str) -> ParsedAnswer:
    s = _sections(message)
    code_src = s["CODE"]
    blocks = _FENCE.findall(code_src) or _FENCE.findall(message)
    if blocks:
        code = blocks[-1][1]
    elif "def " in code_src:
        code = code_src
    else:
        code = ""
    return ParsedAnswer(
        parser="tolerant",
        description=s["DESCRIPTION"].strip(),
        domain=s["DOMAIN"].strip(),
        code=code,
        func_name=func_name_tolerant(code),
    )


def func_name_tolerant(code: str) -> str | None:
    """The last top-level `def`; falls back to FIND's rule for indented-only definitions."""
    names = _TOP_DEF.findall(code)
    return names[-1] if names else func_name_find_compat(code)


def parse_answer(message: str, parser: ParserName = "tolerant") -> ParsedAnswer:
    if parser == "find-compat":
        return parse_find_compat(message)
    if parser == "tolerant":
        return parse_tolerant(message)
    raise ValueError(f"unknown parser {parser!r}; use 'find-compat' or 'tolerant'")
