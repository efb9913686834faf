"""The observational scores of one explanation on one test set, as the token-activation scorers
(neurons, SAE latents) record them: its precision, recall and F1, the Matthews correlation of its
claims with the unit's firing (chance 0), and, beside them, what the test set gives any
explanation: the vacuous explanation's P/R/F1 (one that claims every item) and the share of
items the unit fires on, so a reader sees what a claim of everything would earn on the same items
(docs/evaluator.md, "Chance and the vacuous explanation")."""

from __future__ import annotations

from typing import Any

from interp_harness.evaluator.token_activations import observational as O
from interp_harness.sdk import ScoreResult

# the agent's scores (a refused description gets their worst values: evaluator/answer_bounds.py)
OBSERVATIONAL = (*(f"observational_{m}" for m in O.METRICS), "observational_mcc")
# the test set's, whatever the explanation: `<metric>_vacuous` is the score of the vacuous
# explanation on the same items (a report shows it as the row's baseline), and the share of items
# the unit fires on
VACUOUS = tuple(f"observational_{m}_vacuous" for m in O.METRICS)
CHANCE = (*VACUOUS, "observational_firing_share")
# the reference explanation's on the same items
CEILINGS = ("observational_f1_ceiling", "observational_mcc_ceiling")


def mine(c: O.Counts, details: dict[str, Any]) -> list[ScoreResult]:
    """The explanation's P/R/F1 and MCC from its counts (None where undefined)."""
    v = O.prf(c)
    return [
        *(
            ScoreResult(metric=f"observational_{m}", value=getattr(v, m), details=details)
            for m in O.METRICS
        ),
        ScoreResult(metric="observational_mcc", value=O.mcc(c), details=details),
    ]


def chance(c: O.Counts, details: dict[str, Any]) -> list[ScoreResult]:
    """The vacuous explanation's P/R/F1 and the firing share of the items `c` counts."""
    v = O.prf(O.vacuous(c))
    return [
        *(
            ScoreResult(metric=name, value=getattr(v, m), details=details)
            for name, m in zip(VACUOUS, O.METRICS, strict=True)
        ),
        ScoreResult(metric=CHANCE[-1], value=O.firing_share(c), details=details),
    ]


def ceilings(reference: O.Counts, details: dict[str, Any]) -> list[ScoreResult]:
    """The reference explanation's F1 and MCC on the same items, where they are defined."""
    values = (O.prf(reference).f1, O.mcc(reference))
    return [
        ScoreResult(metric=name, value=v, details=details)
        for name, v in zip(CEILINGS, values, strict=True)
        if v is not None
    ]
