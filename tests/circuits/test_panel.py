"""The circuits episode panel on a built target (circuits-lib/sort/0 of the session's build): the
claimed circuit with its roles; to a viewer who may see the truth, each row marked true, false or
missed with the compiler's role; to one who may not, nothing of the truth; then the calls that
ablate, patch or read components, and no other call."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from interp_harness.evaluator.circuits.panel import CIRCUIT_PANEL, MAX_WORDS_CHARS
from interp_harness.evaluator.panel import PanelView
from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.circuits import build as cb
from interp_harness.function_store.models import CallOutput
from interp_harness.harness.runs.views import TargetCallOut

TARGET = "circuits-lib/sort/0"
ROW = re.compile(r"<tr><td><code>([^<]*)</code></td><td>([^<]*)</td>(.*?)</tr>", re.S)
CELL = re.compile(r"<td>(.*?)</td>", re.S)


def call(step: int, words: list[str], outputs: int, errors: int = 0) -> TargetCallOut:
    outs = [CallOutput(input="x", output="[1]")] * (outputs - errors)
    outs += [CallOutput(input="x", error="unknown component", error_category="agent")] * errors
    return TargetCallOut(
        step=step,
        idx=0,
        inputs=words,
        outputs=outs,
        n_errors=errors,
        latency_s=0.01,
        created_at=datetime.now(UTC),
    )


@pytest.fixture
def case(in_circuits_cache: Path) -> dict[str, Any]:
    """A hand-made answer on sort/0: one true component, one distractor's (false), the rest of
    the truth missed; the calls of an episode, experiments and others."""
    target = Catalog().get(TARGET)
    truth = cb.load_truth(target.hidden.spec["truth"])
    true_one = truth.circuit[-1]
    false_one = next(c for c in truth.components if c not in truth.circuit)
    missed = [c for c in truth.circuit if c != true_one]
    assert missed  # sort's circuit has more than one component: some are missed here
    answer = (
        f"[CIRCUIT]\n{true_one}: reads the sorted <key>\n{false_one}: counts & compares\n"
        "[DESCRIPTION]: sorts.\n[CODE]:\n```python\ndef f(tokens):\n    return sorted(tokens)\n```\n"
    )
    long_words = ["ablate", *["12345"] * 60, "--components", true_one]
    calls = [
        call(1, ["task"], 1),
        call(2, ["31245", "54321"], 2),  # a run: no component named
        call(3, ["ablate", "31245", "--components", true_one, "--kind", "mean"], 1),
        call(3, ["patch", "312", "--source", "231", "--components", false_one], 1),
        call(4, ["activations", "312", "--component", f"{true_one}.pattern"], 1),
        call(4, ["ablate", "312", "--components", "L9H9"], 1, errors=1),
        call(5, long_words, 60),
    ]
    episode = SimpleNamespace(final_answer=answer, calls=calls, scores=[])
    return {
        "target": target,
        "truth": truth,
        "true": true_one,
        "false": false_one,
        "missed": missed,
        "episode": episode,
        "calls": calls,
    }


def render(case: dict[str, Any], show_truth: bool, target: Any = None) -> str:
    view = PanelView(case["episode"], None, target, show_truth)
    out = CIRCUIT_PANEL.render(view)  # type: ignore[misc]
    assert out is not None
    return out.html


def rows(page: str) -> dict[str, list[str]]:
    """Component -> its cells after the name (claimed role, then the truth's columns), unescaped
    and without markup."""
    return {
        name: [html.unescape(role)]
        + [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in CELL.findall(rest)]
        for name, role, rest in ROW.findall(page)
    }


def test_with_the_truth_rows_are_true_false_or_missed(case: dict[str, Any]) -> None:
    page = render(case, True, case["target"])
    roles = case["truth"].roles
    assert "In the true circuit" in page
    expected = {
        case["true"]: ["reads the sorted <key>", "yes", roles[case["true"]]],
        case["false"]: ["counts & compares", "no", ""],  # not in the truth: no true role shown
        **{m: ["", "missed", roles[m]] for m in case["missed"]},
    }
    assert rows(page) == expected
    assert "&lt;key&gt;" in page and "<key>" not in page  # the agent's text is escaped


def test_without_the_truth_nothing_of_it_shows(case: dict[str, Any]) -> None:
    # the viewer may not see the truth: the route passes no target; a target passed anyway
    # (show_truth False) must not leak either
    for target in (None, case["target"]):
        page = render(case, False, target)
        assert "In the true circuit" not in page and "missed" not in page
        assert rows(page) == {
            case["true"]: ["reads the sorted <key>"],
            case["false"]: ["counts & compares"],
        }
        # canaries: the compiler's roles (every component's, the distractors' too) and the
        # true components the answer did not name
        for role in case["truth"].roles.values():
            assert html.escape(role) not in page and role not in page, role
        for name in case["missed"]:
            assert name not in page, name


def test_the_experiments_on_components_are_listed(case: dict[str, Any]) -> None:
    page = render(case, False)
    items = re.findall(r"<li><code>(.*?)</code> \((.*?)\)</li>", page, re.S)
    words = [" ".join(c.inputs) for c in case["calls"]]
    # task and the run name no component: left out; the rest in the order run
    assert "Experiments on components (5)" in page
    assert [html.unescape(w) for w, _ in items[:4]] == words[2:6]
    assert [n for _, n in items] == [
        "1 outputs",
        "1 outputs",
        "1 outputs",
        "1 outputs, 1 errors",
        "60 outputs",
    ]
    shown = html.unescape(items[4][0])  # a long call is cut, and says so
    assert shown == words[6][:MAX_WORDS_CHARS] + "…" and len(words[6]) > MAX_WORDS_CHARS


def test_an_unreadable_truth_still_shows_the_answer(case: dict[str, Any], tmp_path: Path) -> None:
    gone = case["target"].model_copy(deep=True)
    gone.hidden.spec["truth"] = str(tmp_path / "gone.truth.json")
    page = render(case, True, gone)
    assert "True circuit: unreadable (FileNotFoundError)" in page
    assert set(rows(page)) == {case["true"], case["false"]}
