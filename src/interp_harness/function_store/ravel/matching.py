"""Did the model answer an attribute prompt correctly, and what is its label (RAVEL's
instance filter).

RAVEL's own `extract_label_fn` / `filter_example_fn` are not public; these are the rules of the
SAEBench port of RAVEL: normalise (text before the first '"', strip spaces and quotes,
'\\/' → '/', lower-case), prefix match in the shorter direction, and the listed special cases.
"""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo

_ALIASES = {
    "united states": ("england",),
    "united kingdom": ("england",),
    "south korea": ("korea",),
    "north america": ("na", "america"),
    "mandarin": ("chinese",),
}
_INT = re.compile(r"-?\d+")
_UTC = re.compile(r"([+-]\d{1,2})(?::?(\d{2}))?")
_LABEL_END = re.compile(r'["\n,.;:()\[\]{}]')


def normalise(text: str) -> str:
    return text.split('"')[0].strip().strip("'\"").replace("\\/", "/").lower()


def _prefix_match(out: str, gold: str) -> bool:
    if not out or not gold:
        return False
    return out.startswith(gold) if len(gold) < len(out) else gold.startswith(out)


def _utc_offset_hours(zone: str) -> float | None:
    try:
        off = datetime(2024, 1, 15, tzinfo=ZoneInfo(zone)).utcoffset()
    except Exception:  # not an IANA name
        return None
    return None if off is None else off.total_seconds() / 3600


def is_correct(output: str, gold: str, attribute: str, prompt: str = "") -> bool:
    """The SAEBench matching rule for one generated continuation against a gold value."""
    out, g = normalise(output), normalise(gold)
    if not g or not out:
        return False
    if attribute in ("Latitude", "Longitude"):
        m = _INT.search(out)
        return m is not None and abs(int(m.group()) - round(float(g))) <= 2
    if attribute == "Timezone" and "UTC" in prompt:
        want = _utc_offset_hours(gold)
        m = _UTC.search(out.replace("utc", ""))
        if want is None or m is None:
            return False
        got = int(m.group(1)) + (int(m.group(2) or 0) / 60) * (1 if m.group(1)[0] != "-" else -1)
        return abs(got - want) <= 1  # DST tolerance
    golds = [g] + list(_ALIASES.get(g, ()))
    if attribute == "Language" and "," in g:
        golds += [p.strip() for p in g.split(",") if p.strip()]
    if g == "north america" and out.startswith("america"):
        return True
    return any(_prefix_match(out, x) for x in golds)


def extract_label(output: str) -> str:
    """The model's answer as a label: the continuation up to the first punctuation or newline,
    leading space kept (labels are compared token by token, as RAVEL's `compute_metrics`)."""
    m = _LABEL_END.search(output)
    return (output[: m.start()] if m else output).rstrip()
