"""Fitting a sequence-to-sequence function from (input, output) pairs, for the circuits baselines.

A RASP program's output at position i is a function of a few features of the input seen from i:
the token there, the token mirrored or shifted, the position, the length, how often the token
occurs, a prefix count, the sorted input. `fit` looks for the feature (or pair of features)
through which every observed output is a function, the one with the fewest distinct keys first
(the most general lookup table), and writes it as Python code: a table from the feature's value
to the output, with the most frequent output where the table has no entry. With no feature that
explains every pair, the one that explains most is taken.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

Seq = list[Any]


@dataclass(frozen=True)
class Feature:
    name: str
    expr: str  # Python over x (the input), i (the position), n (its length)
    fn: Callable[[Seq, int, int], Any]


def _safe(fn: Callable[[Seq, int, int], Any]) -> Callable[[Seq, int, int], Any]:
    def run(x: Seq, i: int, n: int) -> Any:
        try:
            return fn(x, i, n)
        except Exception:  # a feature undefined on this input (sorting mixed types)
            return None

    return run


def features(vocab: Sequence[Any]) -> list[Feature]:
    """The features tried, the simplest first; per-token counts for each vocabulary item."""
    base = [
        Feature("token", "x[i]", lambda x, i, n: x[i]),
        Feature("position", "i", lambda x, i, n: i),
        Feature("length", "n", lambda x, i, n: n),
        Feature("mirrored token", "x[n - 1 - i]", lambda x, i, n: x[n - 1 - i]),
        Feature("previous token", "x[i - 1] if i > 0 else None", lambda x, i, n: x[i - 1] if i > 0 else None),
        Feature("next token", "x[i + 1] if i + 1 < n else None", lambda x, i, n: x[i + 1] if i + 1 < n else None),
        Feature("first token", "x[0]", lambda x, i, n: x[0]),
        Feature("last token", "x[n - 1]", lambda x, i, n: x[n - 1]),
        Feature("token count", "x.count(x[i])", lambda x, i, n: x.count(x[i])),
        Feature("prefix token count", "x[: i + 1].count(x[i])", lambda x, i, n: x[: i + 1].count(x[i])),
        Feature("sorted", "sorted(x)[i]", lambda x, i, n: sorted(x)[i]),
        Feature("sorted, descending", "sorted(x, reverse=True)[i]", lambda x, i, n: sorted(x, reverse=True)[i]),
        Feature("distinct tokens", "len(set(x))", lambda x, i, n: len(set(x))),
    ]  # fmt: skip
    for v in vocab:
        base.append(Feature(f"count of {v!r}", f"x.count({v!r})", lambda x, i, n, v=v: x.count(v)))
        base.append(
            Feature(
                f"prefix count of {v!r}",
                f"x[: i + 1].count({v!r})",
                lambda x, i, n, v=v: x[: i + 1].count(v),
            )
        )
    return [Feature(f.name, f.expr, _safe(f.fn)) for f in base]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float | int) and isinstance(b, float | int) and not isinstance(a, bool):
        return abs(a - b) <= 1e-3 * max(1.0, abs(a), abs(b))
    return type(a) is type(b) and a == b


@dataclass(frozen=True)
class Fit:
    features: tuple[Feature, ...]
    table: dict[tuple[Any, ...], Any]
    default: Any
    explained: float  # the fraction of observed positions the table reproduces

    def describe(self) -> str:
        names = " and ".join(f.name for f in self.features) or "nothing"
        return f"the output at each position is a function of the {names} there"

    def __call__(self, x: Seq) -> list[Any]:
        n = len(x)
        return [
            self.table.get(tuple(f.fn(x, i, n) for f in self.features), self.default)
            for i in range(n)
        ]


def _table(
    pairs: Sequence[tuple[Seq, Seq]], feats: Sequence[Feature]
) -> tuple[dict[tuple[Any, ...], Any], float]:
    """Each key's most frequent output, and the fraction of positions it reproduces."""
    seen: dict[tuple[Any, ...], list[Any]] = {}
    for x, y in pairs:
        n = len(x)
        for i in range(min(n, len(y))):
            seen.setdefault(tuple(f.fn(x, i, n) for f in feats), []).append(y[i])
    table, hits, total = {}, 0, 0
    for key, outs in seen.items():
        best = max(outs, key=lambda o: sum(_same(o, p) for p in outs))
        table[key] = best
        hits += sum(_same(best, p) for p in outs)
        total += len(outs)
    return table, hits / total if total else 0.0


def fit(pairs: Sequence[tuple[Seq, Seq]], vocab: Sequence[Any]) -> Fit:
    """The simplest feature, or pair of features, that reproduces every observed output (fewest
    table keys first); with none, the single feature or pair that reproduces the most."""
    outs = [o for _, y in pairs for o in y]
    default = Counter(map(repr, outs)).most_common(1)[0][0] if outs else None
    default_value = next((o for o in outs if repr(o) == default), None)
    feats = features(vocab)
    exact: list[Fit] = []
    best: Fit | None = None
    for size in (1, 2):
        for combo in combinations(feats, size):
            table, explained = _table(pairs, combo)
            f = Fit(tuple(combo), table, default_value, explained)
            if explained == 1.0:
                exact.append(f)
            elif best is None or explained > best.explained:
                best = f
        if exact:
            return min(exact, key=lambda f: len(f.table))
    return best or Fit((), {}, default_value, 0.0)


def fit_code(fit: Fit) -> str:
    """`def f(tokens)`: the fit's table over its features, the default where a key is unseen."""
    key = ", ".join(f.expr for f in fit.features)
    return (
        f"TABLE = {fit.table!r}\n"
        f"DEFAULT = {fit.default!r}\n\n\n"
        "def key(x, i, n):\n"
        "    try:\n"
        f"        return ({key},)\n"
        "    except Exception:\n"
        "        return None\n\n\n"
        "def f(tokens):\n"
        "    x = list(tokens)\n"
        "    n = len(x)\n"
        "    return [TABLE.get(key(x, i, n), DEFAULT) for i in range(n)]\n"
    )
