"""The string-function episode panel: each unit test's input, expected output, the agent code's
output and match, as the `string_exact` score stored them (never by running the code again)."""

from __future__ import annotations

from typing import Any

from interp_harness.evaluator.strings import correct_pairs
from interp_harness.evaluator.unit_tests_panel import table_panel
from interp_harness.sdk import PanelView


def code_rows(view: PanelView) -> list[dict[str, Any]]:
    try:
        pairs = correct_pairs(view.target.unit_tests)
    except (ValueError, IndexError):
        return []
    exact = next((s for s in view.episode.scores if s.metric == "string_exact"), None)
    items = (exact.details.get("items") if exact else None) or []
    answer = view.answer
    rows = []
    for k, (inp, exp) in enumerate(pairs):
        item = items[k] if k < len(items) else {}
        if "out" in item:
            output = item["out"]
        elif "err" in item:
            output = f"error: {item['err']}"
        elif answer is None or not (answer.code.strip() and answer.func_name):
            output = "(no code)"
        elif exact is not None and exact.status == "error":
            output = f"not scored: {exact.error}"
        else:
            output = "(not stored)"
        rows.append({"input": inp, "expected": exp, "output": output, "match": item.get("ok")})
    return rows


code_test_panel = table_panel(code_rows, "Agent's code output")
