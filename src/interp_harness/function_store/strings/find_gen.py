"""find-gen strings: string functions generated like FIND's `make_strings/`, deterministic per seed.

Differences from FIND's generator, on purpose:
* seeded (FIND's is not), so the same seed and options give byte-identical targets;
* the avoid dict with its two missing-comma typos fixed (`strings.avoid.AVOID_FIXED`);
* exact proportions: round(n * strings_p_atomic) atomic functions at seeded positions;
* degenerate functions are rejected: identity on every pool input, constant on every pool input,
  or fewer than 10 pool inputs on which the ground truth does not raise;
* test inputs come from our own pool (`strings.pool`), preferring inputs the function changes;
* a distractor pair is never a correct execution of the function itself (FIND let 2 of 20,000 be).
"""

from __future__ import annotations

import random

from interp_harness.function_store.models import UnitTest
from interp_harness.function_store.strings.pool import INPUT_POOL
from interp_harness.function_store.strings.program import StringProgram
from interp_harness.function_store.strings.render import render_code, render_description
from interp_harness.function_store.strings.sampling import sample_atomic, sample_composed
from interp_harness.sdk import HiddenTruth, PublicMeta, Target, make_canary

N_TESTS = 10
N_EXEMPLARS = 10
MAX_CHANGED = 8  # at most this many of the 10 test inputs are ones the function changes

Pair = tuple[str, str]


def _evaluate(program: StringProgram, rng: random.Random) -> list[Pair]:
    """(input, output) for every pool input on which the ground truth does not raise."""
    pairs = []
    for s in INPUT_POOL:
        try:
            pairs.append((s, str(program(s, rng))))
        except Exception:
            continue
    return pairs


def _degenerate(pairs: list[Pair]) -> bool:
    return len(pairs) < N_TESTS or all(i == o for i, o in pairs) or len({o for _, o in pairs}) == 1


def _pick_tests(pairs: list[Pair], rng: random.Random) -> list[Pair]:
    changed = [p for p in pairs if p[0] != p[1]]
    same = [p for p in pairs if p[0] == p[1]]
    k = min(len(changed), MAX_CHANGED)
    k = max(k, N_TESTS - len(same))
    picked = rng.sample(changed, k) + rng.sample(same, N_TESTS - k)
    rng.shuffle(picked)
    return picked


class _Fn:
    def __init__(self, program: StringProgram, tests: list[Pair], valid: list[str]) -> None:
        self.program = program
        self.tests = tests
        self.valid = valid


def _make_functions(n: int, p_atomic: float, rng: random.Random) -> list[_Fn]:
    n_atomic = round(n * p_atomic)
    kinds = ["atomic"] * n_atomic + ["composed"] * (n - n_atomic)
    rng.shuffle(kinds)
    seen: set[tuple[str, ...]] = set()
    out: list[_Fn] = []
    for kind in kinds:
        while True:
            program = sample_atomic(rng) if kind == "atomic" else sample_composed(rng)
            if program.key() in seen:
                continue  # FIND's check_exist: same names and parameters
            pairs = _evaluate(program, random.Random(rng.getrandbits(64)))
            if _degenerate(pairs):
                continue
            break
        seen.add(program.key())
        out.append(_Fn(program, _pick_tests(pairs, rng), [i for i, _ in pairs]))
    return out


def _is_execution(program: StringProgram, pair: Pair) -> bool:
    """Whether `pair` is (certainly or possibly) a correct execution of `program`."""
    if program.stochastic:
        return False  # cannot tell; the chance of a collision is negligible
    try:
        return str(program(pair[0])) == pair[1]
    except Exception:
        return False


def _unit_tests(i: int, fns: list[_Fn], rng: random.Random) -> list[UnitTest]:
    """As FIND's `unit_test_data.json`: the correct pair plus two correct pairs of other
    functions, at a uniform 1-based position."""
    own = fns[i]
    tests = []
    for correct in own.tests:
        chosen: list[Pair] = []
        for _ in range(100_000):
            if len(chosen) == 2:
                break
            j = rng.randrange(len(fns))
            if j == i:
                continue
            pair = rng.choice(fns[j].tests)
            if pair == correct or pair in chosen or _is_execution(own.program, pair):
                continue
            chosen.append(pair)
        if len(chosen) < 2:  # only if every other function behaved like this one
            raise RuntimeError(f"no distractors found for find-gen string function {i}")
        pos = rng.randint(1, 3)
        triplet = chosen[: pos - 1] + [correct] + chosen[pos - 1 :]
        tests.append(
            UnitTest(inputs=[p[0] for p in triplet], outputs=[p[1] for p in triplet], correct=pos)
        )
    return tests


def _exemplars(fn: _Fn, rng: random.Random) -> list[str]:
    tested = {i for i, _ in fn.tests}
    fresh = [s for s in fn.valid if s not in tested]
    picked = rng.sample(fresh, min(N_EXEMPLARS, len(fresh)))
    picked += rng.sample(sorted(tested), N_EXEMPLARS - len(picked))
    return picked


def generate(seed: int, n: int, p_atomic: float) -> list[Target]:
    rng = random.Random(f"find-gen/strings/{seed}")
    fns = _make_functions(n, p_atomic, rng)
    # Distractors need at least two other functions: add unlisted decoys to tiny sets.
    pool = fns + _make_functions(max(0, 3 - n), p_atomic, random.Random(f"decoys/{seed}"))
    targets = []
    for i, fn in enumerate(fns):
        tid = f"find-gen/strings/s{seed}/f{i:05d}"
        canary = make_canary(tid)
        targets.append(
            Target(
                id=tid,
                dataset="find-gen",
                family="strings",
                variant=fn.program.kind,
                public=PublicMeta(input_kind="string", prompt_family="strings"),
                hidden=HiddenTruth(
                    runner="string",
                    spec=fn.program.model_dump(),
                    description=render_description(fn.program),
                    code=render_code(fn.program, canary),
                    canary=canary,
                ),
                unit_tests=_unit_tests(i, pool, rng),
                exemplars=_exemplars(fn, rng),
            )
        )
    return targets
