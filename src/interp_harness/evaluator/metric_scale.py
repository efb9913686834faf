"""Each metric's range and the score a trivial answer gets on it: what a report's intervals stay
inside, and the baseline it prints beside every score (docs/evaluator.md, "Reports").

The low end of every range is the metric's worst value (`answer_bounds.WORST`: an answer a metric
cannot read scores it), the high end its best. `trivial` is what an answer carrying no
information about the target scores whatever the target is (chance for a forced choice or a
ranking, 0 for a correlation, whose constant prediction covaries with nothing); None where it
depends on the target (an accuracy on an unbalanced test set, the observational rates, whose
vacuous explanation scores the base rate): a report then takes the baseline from the floor run
or the vacuous explanation's score, when the run has them.

A metric missing here has no known range: its rows keep the Student-t interval and say so.
"""

from __future__ import annotations

from dataclasses import dataclass

from interp_harness.evaluator.answer_bounds import WORST


@dataclass(frozen=True)
class Scale:
    low: float
    high: float
    trivial: float | None = (
        None  # the score of an answer that says nothing (None: target-dependent)
    )
    lower_is_better: bool = False  # a distance (circuits' CMD): the best answer scores `low`


_RATE = Scale(0.0, 1.0)
_CHANCE_HALF = Scale(0.0, 1.0, 0.5)  # balanced accuracy and AUC: 0.5 for any constant decision
_CORRELATION = Scale(-1.0, 1.0, 0.0)

SCALES: dict[str, Scale] = {
    # FIND's unit tests pick 1 of 3 examples
    "unit_test": Scale(0.0, 1.0, 1 / 3),
    "unit_test_strict": Scale(0.0, 1.0, 1 / 3),
    "simulation_top_random": _CORRELATION,
    "simulation_all": _CORRELATION,
    "observational_precision": _RATE,
    "observational_recall": _RATE,
    "observational_f1": _RATE,
    "observational_firing_share": _RATE,  # the test set's, whatever the explanation
    **{f"{t}_accuracy": _RATE for t in ("detection", "fuzzing")},
    **{f"{t}_{m}": _CHANCE_HALF for t in ("detection", "fuzzing") for m in ("balanced_accuracy", "auc")},
    "iia": _RATE,
    # what a trivial code answer gets depends on the function (a nearly constant one is matched by
    # a constant): the interpolation floor run is its baseline
    "code_success": _RATE,
    "string_exact": _RATE,
    "string_exact_find": _RATE,
    "domain_iou": _RATE,
    "cause": _RATE,
    "isolate": _RATE,
    "disentangle": _RATE,
    # circuits: node P/R/F1 and the size-matched random circuit's F1 depend on the truth's size,
    # CPR on the target (the empty circuit's m(∅)): the random floor run is their baseline
    **{m: _RATE for m in ("node_precision", "node_recall", "node_f1", "node_f1_random")},
    "circuit_code_exact": _RATE,
    "cpr": _RATE,
    "cmd": Scale(0.0, 1.0, 1.0, lower_is_better=True),  # the empty circuit's is 1
    "closure": _CHANCE_HALF,  # a claim no better than a random one of its size beats half
}  # fmt: skip

# facts about a test set reported beside the scores (no baseline, never "no information")
DESCRIPTIVE = frozenset({"observational_firing_share"})

# a reference's score through the same scorer (`<metric>_ceiling`, FIND's judge ceilings) lies in
# its metric's range
_CEILINGS = {"unit_test_ceiling": "unit_test", "unit_test_ceiling_strict": "unit_test_strict"}


def scale_of(metric: str) -> Scale | None:
    """The range (and trivial score) of `metric` or of the metric whose ceiling it holds."""
    base = _CEILINGS.get(metric) or metric.removesuffix("_ceiling")
    if base.endswith(("_mcc", "_matthews")):  # Matthews' correlation: 0 for a constant decision
        return _CORRELATION
    return SCALES.get(metric) or SCALES.get(base)


def worst_is_low() -> dict[str, float]:
    """The metrics whose worst value (answer_bounds.WORST) is not their range's low end: empty
    when the two tables agree (a test checks it)."""
    return {
        m: w
        for m, w in WORST.items()
        if w is not None and (s := scale_of(m)) is not None and s.low != w
    }
