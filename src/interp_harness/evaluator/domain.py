"""Numeric domain scores (FIND's "targeted evaluation"): does [DOMAIN] locate the corrupted interval?

We read interval(s) out of the free text and compare them with the true corrupted interval
(`target.hidden.corruption`), everything clipped to the test range [-128, 128]:
- `interval_inside`: the noise covers (a, b);
- `interval_smaller`: x <= a, i.e. [-128, a];  `interval_larger`: x >= a, i.e. [a, 128].
Score: IoU of the union of predicted intervals with the true one, plus an outcome:
`found` (IoU > 0 on a corrupted target), `missed` (corrupted, nothing overlapping),
`false_alarm` (an interval reported on a clean target, or only non-overlapping ones),
`correct_reject` (clean and nothing reported).
Reading intervals from prose is heuristic (documented in docs/evaluator.md): bracket pairs
`[a, b]`/`(a, b)`, `between a and b`, `from a to b`, `a < x < b`, `a to b`, and one-sided
phrases (`x > a`, `greater/larger/more than a`, `above a`, `x < a`, `less/smaller than a`,
`below a`). Intervals spanning >= 90% of the test range are taken as statements about the whole
domain, not anomalies, and dropped; so is everything when the text says there is no such interval.
"""

from __future__ import annotations

import math
import re
from typing import Any

from interp_harness.evaluator.api import ScoreResult

LO, HI = -128.0, 128.0
# A number never starts inside another one (the lookbehind) and digit runs never backtrack
# (possessive): otherwise every pattern that begins with a number retries from each digit of a
# long run, which is quadratic (20,000 digits took 38 s).
NUM = r"[-+−]?\s?(?<![\d.])(?:\d++(?:\.\d*+)?|\.\d++)(?:[eE][-+]?\d++)?"
MAX_DOMAIN_CHARS = 10_000  # longer [DOMAIN] text is read up to here (FIND's answers are a line)
_PAIR = [
    re.compile(rf"[\[(]\s*({NUM})\s*,\s*({NUM})\s*[\])]"),
    re.compile(rf"between\s+(?:x\s*=\s*)?({NUM})\s+and\s+(?:x\s*=\s*)?({NUM})", re.I),
    re.compile(rf"from\s+(?:x\s*=\s*)?({NUM})\s+(?:to|until|through)\s+(?:x\s*=\s*)?({NUM})", re.I),
    re.compile(rf"({NUM})\s*<=?\s*x\s*<=?\s*({NUM})", re.I),
    re.compile(rf"({NUM})\s+to\s+({NUM})", re.I),
]
_ABOVE = re.compile(
    rf"(?:x\s*>=?|(?:greater|larger|more|bigger|higher)\s+than(?:\s+or\s+equal\s+to)?|above|exceeds?|beyond)\s*(?:x\s*=\s*)?({NUM})",
    re.I,
)
_BELOW = re.compile(
    rf"(?:x\s*<=?|(?:less|smaller|lower)\s+than(?:\s+or\s+equal\s+to)?|below|under)\s*(?:x\s*=\s*)?({NUM})",
    re.I,
)
_NONE = re.compile(
    r"\bno\s+(?:such\s+)?(?:interval|unexpected|anomal|corrupt|unusual|different)|"
    r"does\s+not\s+(?:display|show|have|exhibit)\s+(?:any\s+)?(?:unexpected|anomal|unusual|an?\s+interval)|"
    r"there\s+is\s+no\s+(?:such\s+)?interval",
    re.I,
)


def _num(s: str) -> float:
    return float(s.replace("−", "-").replace(" ", ""))


def _clip(a: float, b: float) -> tuple[float, float] | None:
    lo, hi = max(LO, min(a, b)), min(HI, max(a, b))
    return (lo, hi) if hi > lo else None


def parse_intervals(text: str) -> list[tuple[float, float]]:
    """Intervals named in a [DOMAIN] answer, clipped to [-128, 128], merged, domain-wide ones dropped."""
    text = (text or "")[:MAX_DOMAIN_CHARS]
    if not text or _NONE.search(text):
        return []
    found: list[tuple[float, float]] = []
    spans: list[tuple[int, int]] = []

    def taken(m: re.Match) -> bool:
        return any(m.start() < e and s < m.end() for s, e in spans)

    for pat in _PAIR:
        for m in pat.finditer(text):
            if taken(m):
                continue
            iv = _clip(_num(m.group(1)), _num(m.group(2)))
            spans.append(m.span())
            if iv:
                found.append(iv)
    for pat, one_sided in ((_ABOVE, lambda a: (a, HI)), (_BELOW, lambda a: (LO, a))):
        for m in pat.finditer(text):
            if taken(m):
                continue
            iv = _clip(*one_sided(_num(m.group(1))))
            spans.append(m.span())
            if iv:
                found.append(iv)
    found = [iv for iv in found if iv[1] - iv[0] < 0.9 * (HI - LO)]
    return merge(found)


def merge(ivs: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[list[float]] = []
    for a, b in sorted(ivs):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def true_interval(corruption: dict[str, Any] | None) -> tuple[float, float] | None:
    """The corrupted region clipped to the test range; None for an uncorrupted target."""
    if not corruption:
        return None
    kind = corruption.get("type")
    iv = list(corruption.get("interval") or corruption.get("boundary") or [])
    vals = [None if v is None or (isinstance(v, float) and math.isinf(v)) else float(v) for v in iv]
    if kind == "interval_smaller":
        a = vals[-1] if len(vals) > 1 else vals[0]
        return _clip(LO, a)
    if kind == "interval_larger":
        return _clip(vals[0], HI)
    if kind == "interval_inside":
        return _clip(vals[0], vals[1])
    raise ValueError(f"unknown corruption type {kind!r}")


def _length(ivs: list[tuple[float, float]]) -> float:
    return sum(b - a for a, b in ivs)


def iou(pred: list[tuple[float, float]], truth: tuple[float, float]) -> float:
    inter = sum(max(0.0, min(b, truth[1]) - max(a, truth[0])) for a, b in pred)
    union = _length(pred) + (truth[1] - truth[0]) - inter
    return inter / union if union > 0 else 0.0


def score_domain(domain_text: str, corruption: dict[str, Any] | None, details: dict) -> ScoreResult:
    pred = parse_intervals(domain_text)
    truth = true_interval(corruption)
    d = {**details, "predicted": pred, "truth": truth}
    if truth is None:
        d["outcome"] = "false_alarm" if pred else "correct_reject"
        return ScoreResult(metric="domain_iou", value=None, details=d)
    value = iou(pred, truth) if pred else 0.0
    d["outcome"] = "found" if value > 0 else ("false_alarm" if pred else "missed")
    return ScoreResult(metric="domain_iou", value=value, details=d)
