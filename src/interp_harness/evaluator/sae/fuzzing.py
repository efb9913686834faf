"""delphi's fuzzing scorer (Paulo et al. 2024, §3 "Scoring"; EleutherAI delphi,
`scorers/classifier/fuzz.py`, its `fuzz_type="active"`): activating texts are shown with tokens
marked << like this >>, and the scorer model says whether the marks are on what the explanation
describes. Each activating text appears twice: once marked right (every token whose activation is
at least 0.3 of the text's max, delphi's threshold) and once marked wrong (random tokens at or
below that threshold, as many as the mean number of active tokens per text, rounded up, as
delphi's `n_incorrect`). delphi also always marks the window's centre token in a wrong marking,
an artifact of its centred windows that ours do not have. The lexical decider predicts "right"
iff a marked run contains one of the explanation's strings.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from interp_harness.evaluator.sae.classify import Sample, Task
from interp_harness.evaluator.sae.detection import N_ACTIVATING, quantile_sample, render
from interp_harness.evaluator.sae.observational import fires, mentions
from interp_harness.evaluator.token_activations.membership import LexicalMembership
from interp_harness.evaluator.token_activations.testset import TokenActs

THRESHOLD = 0.3  # delphi's: a token is marked right when its act >= 0.3 of the text's max
L, R = "<<", ">>"

SYSTEM = (
    "You check explanations of a feature of a language model. The feature is active on some "
    "tokens of a text. You are given an explanation of the feature and one text in which some "
    "tokens are marked between << and >> as the ones the feature is active on. Some texts are "
    "marked wrongly. Decide whether the marked tokens are what the explanation describes. Reply "
    'with only "Answer: 1" if the marks fit the explanation or "Answer: 0" if they do not.'
)


def highlight(tokens: Sequence[str], marked: set[int]) -> str:
    """The text with each run of marked tokens between << and >> (the run's leading whitespace
    stays outside the marks)."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        if i not in marked:
            out.append(tokens[i])
            i += 1
            continue
        k = i
        while k + 1 < len(tokens) and k + 1 in marked:
            k += 1
        run = "".join(tokens[i : k + 1])
        stripped = run.lstrip()
        out.append(run[: len(run) - len(stripped)] + L + stripped + R)
        i = k + 1
    return "".join(out)


def runs(marked: Sequence[int]) -> list[list[int]]:
    """Consecutive marked positions, grouped."""
    out: list[list[int]] = []
    for p in sorted(marked):
        if out and out[-1][-1] == p - 1:
            out[-1].append(p)
        else:
            out.append([p])
    return out


def samples(activating: Sequence[TokenActs], seed: int, n: int = N_ACTIVATING) -> list[Sample]:
    rng = random.Random(seed)
    picked = [e for e, _ in quantile_sample([e for e in activating if fires(e)], n, rng)]
    if not picked:
        return []
    n_wrong = math.ceil(sum(sum(v > 0 for v in e.values) for e in picked) / len(picked))
    out = []
    for e in picked:
        cut = THRESHOLD * max(e.values)
        right = {i for i, v in enumerate(e.values) if v >= cut}
        low = [i for i, v in enumerate(e.values) if v <= cut]
        wrong = set(rng.sample(low, min(n_wrong, len(low))))
        toks = tuple(e.tokens)
        out.append(Sample(highlight(toks, right), True, toks, tuple(sorted(right))))
        if wrong:
            out.append(Sample(highlight(toks, wrong), False, toks, tuple(sorted(wrong))))
    rng.shuffle(out)
    return out


def lexical(member: LexicalMembership, s: Sample) -> bool:
    return any(mentions(member, [s.tokens[i] for i in run]) for run in runs(s.marked))


TASK = Task("fuzzing", SYSTEM, render, lexical)
