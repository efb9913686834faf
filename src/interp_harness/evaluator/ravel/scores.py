"""Cause, Isolate and Disentangle (RAVEL's `metric_utils.compute_metrics` and
`compute_disentangle_score`).

Per example: the first N generated token ids are compared with the label's token ids (right
padded: label positions past its end count as matches), against `inv_label` (cause) and `label`
(isolate). Per base template: the fraction of examples that match, rounded to 2 decimals as
RAVEL's `compute_metrics` does. For a target attribute A:

    Cause(A)       = mean over A's templates of the inv_label accuracy
    Isolate(A)     = mean over attributes B != A of (mean over B's templates of the label accuracy)
    Disentangle(A) = (Cause(A) + Isolate(A)) / 2

Templates are averaged within an attribute first; attributes count equally.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from statistics import mean

from pydantic import BaseModel


class ExampleOutcome(BaseModel):
    """What one interchange produced, next to the two labels it is scored against."""

    attribute: str  # the base template's attribute
    template: str  # the base template (RAVEL's `split` field)
    generated_ids: list[int]
    label_ids: list[int]
    inv_label_ids: list[int]


class Scores(BaseModel):
    attribute: str
    cause: float
    isolate: float
    disentangle: float
    n_cause: int  # examples behind each score
    n_isolate: int


def sequence_match(generated: Sequence[int], label: Sequence[int], n: int) -> bool:
    """RAVEL's sequence accuracy for one example over the first n positions."""
    for i in range(n):
        if i >= len(label):
            break  # padded label position: counts as a match
        if i >= len(generated) or generated[i] != label[i]:
            return False
    return True


def template_accuracies(
    outcomes: Sequence[ExampleOutcome], n: int, against: str
) -> dict[str, dict[str, float]]:
    """attribute -> template -> accuracy (2 decimals) against `label` or `inv_label`."""
    hits: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for o in outcomes:
        label = o.inv_label_ids if against == "inv_label" else o.label_ids
        hits[(o.attribute, o.template)].append(sequence_match(o.generated_ids, label, n))
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for (attr, template), h in hits.items():
        out[attr][template] = round(sum(h) / len(h), 2)
    return dict(out)


def disentangle(outcomes: Sequence[ExampleOutcome], target: str, n: int = 1) -> Scores:
    """Scores of a featurizer that claims to localise `target`, from its interchange outcomes."""
    cause_acc = template_accuracies(outcomes, n, "inv_label").get(target, {})
    iso_acc = {a: t for a, t in template_accuracies(outcomes, n, "label").items() if a != target}
    if not cause_acc:
        raise ValueError(f"no examples of the target attribute {target!r}")
    if not iso_acc:
        raise ValueError(f"no examples of any attribute other than {target!r}")
    cause = mean(cause_acc.values())
    isolate = mean(mean(t.values()) for t in iso_acc.values())
    return Scores(
        attribute=target,
        cause=cause,
        isolate=isolate,
        disentangle=0.5 * (cause + isolate),
        n_cause=sum(o.attribute == target for o in outcomes),
        n_isolate=sum(o.attribute != target for o in outcomes),
    )
