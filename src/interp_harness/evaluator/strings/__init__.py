"""FIND's string code score: exact match on the correct pair of each unit-test triplet (FIND's
`string_indicator.py`).

Two modes, both reported:
- `string_exact` (default, correct): the input is passed to the agent's function as data; each of
  the 10 items is scored on its own (an exception fails that item only); score = mean of 10.
- `string_exact_find` (find-compat): FIND pastes the input inside single quotes into an `exec`
  string (so a `'` or a backslash in the input changes or breaks the call), stops at the first
  exception after appending one 0, and averages the partial list (3 passes then an error: 3/4).
Correct iff the returned value is a `str` equal to the expected output (FIND compares with `==`;
a non-str object with a permissive `__eq__` could pass there, never here: a deliberate deviation).
"""

from __future__ import annotations

from interp_harness.function_store.models import UnitTest
from interp_harness.sdk import ScoreResult

OUT_CHARS = 1000  # an agent output kept in a score's items (its start)


def correct_pairs(unit_tests: list[UnitTest]) -> list[tuple[str, str]]:
    """The (input, output) of the correct item of each triplet; `correct` is 1-based."""
    pairs = []
    for u in unit_tests:
        if u.outputs is None:
            raise ValueError("string unit tests need outputs")
        i = u.correct - 1
        pairs.append((u.inputs[i], u.outputs[i]))
    return pairs


def _match(expected: str, r: dict) -> bool:
    return "v" in r and not r.get("truncated") and r["v"] == expected


def _sandbox_error(metric: str, agent: object, d: dict) -> ScoreResult | None:
    """The sandbox itself failed: an error state, not a score."""
    if getattr(agent, "status", None) != "infrastructure":
        return None
    return ScoreResult(
        metric=metric,
        status="error",
        error_category="sandbox",
        error=f"sandbox: {agent.reason}",
        details=d,
    )


def score_default(pairs: list[tuple[str, str]], agent: object, details: dict) -> ScoreResult:
    d = dict(details)
    if (err := _sandbox_error("string_exact", agent, d)) is not None:
        return err
    items = []
    results = list(getattr(agent, "results", []) or [])
    for k, (inp, exp) in enumerate(pairs):
        if k < len(results):
            r = results[k]
            items.append(
                {
                    "input": inp,
                    "ok": _match(exp, r),
                    # what the agent's code returned, for the pages (they never run code)
                    **({"out": str(r["v"])[:OUT_CHARS]} if "v" in r else {}),
                    **({"err": r["err"]} if "err" in r else {}),
                }
            )
        else:
            items.append(
                {"input": inp, "ok": False, "err": getattr(agent, "reason", None) or "not run"}
            )
    d["items"] = items
    if reason := getattr(agent, "reason", None):
        d["failure"] = reason
    value = sum(i["ok"] for i in items) / len(items) if items else 0.0
    return ScoreResult(metric="string_exact", value=value, details=d)


def score_find_compat(pairs: list[tuple[str, str]], agent: object, details: dict) -> ScoreResult:
    d = dict(details)
    if (err := _sandbox_error("string_exact_find", agent, d)) is not None:
        return err
    results = list(getattr(agent, "results", []) or [])
    scores: list[int] = []
    for k, (_inp, exp) in enumerate(pairs):
        if k >= len(results) or "err" in results[k]:
            scores.append(0)  # FIND: the first exception appends one 0 and stops
            d["stopped_at"] = k
            d["failure"] = (
                results[k]["err"]
                if k < len(results)
                else (getattr(agent, "reason", None) or "no code")
            )
            break
        scores.append(int(_match(exp, results[k])))
    d["partial_scores"] = scores
    return ScoreResult(metric="string_exact_find", value=sum(scores) / len(scores), details=d)
