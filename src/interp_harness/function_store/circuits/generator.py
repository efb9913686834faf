"""`circuits-gen`: a seeded generator of fresh RASP programs (find-gen's idea, for circuits), and
the distractors every target merges with its asked program. Build time only (imports tracr).

A program is a short chain of operations over a drawn vocabulary (letters or small integers,
3 to 5 tokens) and length (4 to 6), each drawing its inputs among the variables made so far
(the tokens, the indices, earlier results; recent ones preferred, so programs get deep):
- `map`: a categorical function of one variable (x + c, min(x, c), x % m, a threshold, a table);
- `indicator`: a numerical 0/1 of one variable (x in a drawn set), read by numerical means;
- `sequence map`: a categorical function of two variables (x + y, min, max, x == y, x < y);
- `shift`: a variable read k positions back or forward (a select on indices, a categorical
  aggregate);
- `reverse`: a variable read from the mirrored position (the select needs the length, itself a
  selector width);
- `mean`: a numerical aggregate, the mean of an indicator over the positions a comparison
  (==, !=, <, <=, >, >=, always) of two variables selects;
- `width`: a selector width, how many positions a comparison selects;
- `threshold`: a categorical 0/1 of a numerical variable (x > t).
The last operation is the output. A program is redrawn when tracr cannot compile it, when its
output does not depend on the tokens (constant over every drawn input of one length), when the
compiled model disagrees with RASP's evaluation on drawn inputs, or when most positions have no
output. The description (hidden: the ground truth) lists the operations in order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from interp_harness.function_store.circuits.compile import Compiled, compile_program
from interp_harness.model_services.intervention.circuit_model import CircuitModel

MAX_TRIES = 200
CHECK_INPUTS = 40  # drawn inputs the compiled model must agree with RASP's evaluation on
MAX_PAIRS = 30  # a sequence map's input value pairs (its MLP's size grows with them)
_CMP_TEXT = {"EQ": "==", "NEQ": "!=", "LT": "<", "LEQ": "<=", "GT": ">", "GEQ": ">=", "TRUE": "any"}


class GenerationFailed(RuntimeError):
    pass


@dataclass
class Var:
    sop: Any
    name: str
    kind: str  # "cat" | "num"
    values: list[Any] | None  # the value set where known (a mean's is not)
    depth: int
    deps: tuple[str, ...] = ()
    line: str = ""
    op: str = ""


@dataclass
class Program:
    sop: Any
    description: str
    vocab: list[Any]
    max_len: int
    ops: list[str] = field(default_factory=list)  # the operation kinds, in order
    depth: int = 0


def draw_task(rng: np.random.Generator) -> tuple[list[Any], int]:
    """A vocabulary and a length."""
    n = int(rng.integers(3, 6))
    if rng.random() < 0.5:
        vocab: list[Any] = sorted(str(c) for c in rng.choice(list("abcdefgh"), n, replace=False))
    else:
        vocab = list(range(n)) if rng.random() < 0.5 else list(range(1, n + 1))
    return vocab, int(rng.integers(4, 7))


def _ints(values: list[Any] | None) -> bool:
    return bool(values) and all(isinstance(v, int) and not isinstance(v, bool) for v in values)


def _comparable(a: Var, b: Var) -> bool:
    if a.values is None or b.values is None:
        return False
    return _ints(a.values) == _ints(b.values) and (
        _ints(a.values) or all(isinstance(v, str) for v in a.values + b.values)
    )


class _Drawer:
    def __init__(self, rng: np.random.Generator, vocab: list[Any], max_len: int) -> None:
        from tracr.rasp import rasp

        self.rasp = rasp
        self.rng = rng
        self.max_len = max_len
        self.ops: list[str] = []
        self.vars = [
            Var(rasp.tokens, "tokens", "cat", list(vocab), 0),
            Var(rasp.indices, "indices", "cat", list(range(max_len)), 0),
        ]

    def pick(self, ok: Callable[[Var], bool]) -> Var | None:
        cands = [v for v in self.vars if ok(v)]
        if not cands:
            return None
        w = np.array([2.0 ** (i + 1) for i in range(len(cands))])  # recent ones preferred
        return cands[int(self.rng.choice(len(cands), p=w / w.sum()))]

    def add(
        self, sop: Any, kind: str, values: list[Any] | None, deps: list[Var], text: str, op: str
    ) -> Var:
        name = f"v{len(self.vars) - 1}"
        depth = 1 + max(d.depth for d in deps)
        var = Var(sop, name, kind, values, depth, tuple(d.name for d in deps), text, op)
        self.vars.append(var)
        self.ops.append(op)
        return var

    def used(self, last: Var) -> list[Var]:
        """The operations the output depends on, in order (tracr compiles only those)."""
        by_name = {v.name: v for v in self.vars}
        need, stack = set(), [last.name]
        while stack:
            n = stack.pop()
            if n not in need:
                need.add(n)
                stack.extend(by_name[n].deps)
        return [v for v in self.vars[2:] if v.name in need]

    def cat(self, v: Var) -> bool:
        return v.kind == "cat" and v.values is not None and len(v.values) >= 2

    # ---- the operations; each returns None when the pool has no fitting input ----------------

    def op_map(self) -> Var | None:
        rasp, rng = self.rasp, self.rng
        s = self.pick(self.cat)
        if s is None:
            return None
        vals = list(s.values or [])
        if _ints(vals):
            c = int(rng.choice(vals))
            m = int(rng.integers(2, 4))
            fns: list[tuple[str, Callable[[Any], Any]]] = [
                (f"{s.name} + {c}", lambda x: x + c),
                (f"min({s.name}, {c})", lambda x: min(x, c)),
                (f"max({s.name}, {c})", lambda x: max(x, c)),
                (f"{s.name} % {m}", lambda x: x % m),
                (f"1 if {s.name} > {c} else 0", lambda x: 1 if x > c else 0),
            ]
            text, f = fns[int(rng.integers(len(fns)))]
        else:
            outs = rng.integers(0, 3, size=len(vals)).tolist()
            table = dict(zip(vals, outs, strict=True))
            text = f"{table}[{s.name}]"

            def f(x: Any, table: dict = table) -> Any:
                return table[x]

        out = sorted({f(v) for v in vals})
        if len(out) < 2:
            return None
        return self.add(rasp.categorical(rasp.Map(f, s.sop)), "cat", out, [s], text, "map")

    def op_indicator(self) -> Var | None:
        rasp, rng = self.rasp, self.rng
        s = self.pick(self.cat)
        if s is None:
            return None
        vals = list(s.values or [])
        k = int(rng.integers(1, len(vals)))
        chosen = {vals[int(i)] for i in rng.choice(len(vals), k, replace=False)}
        shown = sorted(chosen, key=str)
        sop = rasp.numerical(rasp.Map(lambda x, t=frozenset(chosen): 1 if x in t else 0, s.sop))
        text = f"1 if {s.name} in {shown} else 0  (numerical)"
        return self.add(sop, "num", [0, 1], [s], text, "indicator")

    def op_sequence_map(self) -> Var | None:
        rasp, rng = self.rasp, self.rng
        a = self.pick(self.cat)
        if a is None:
            return None
        b = self.pick(
            lambda v: (
                self.cat(v)
                and v is not a
                and _comparable(a, v)
                and len(v.values or []) * len(a.values or []) <= MAX_PAIRS
            )
        )
        if b is None:
            return None
        fns: list[tuple[str, Callable[[Any, Any], Any]]] = [
            (f"1 if {a.name} == {b.name} else 0", lambda x, y: 1 if x == y else 0),
            (f"1 if {a.name} < {b.name} else 0", lambda x, y: 1 if x < y else 0),
        ]
        if _ints(a.values):
            fns += [
                (f"{a.name} + {b.name}", lambda x, y: x + y),
                (f"min({a.name}, {b.name})", lambda x, y: min(x, y)),
                (f"max({a.name}, {b.name})", lambda x, y: max(x, y)),
            ]
        text, f = fns[int(rng.integers(len(fns)))]
        out = sorted({f(x, y) for x in a.values or [] for y in b.values or []})
        if len(out) < 2:
            return None
        sop = rasp.categorical(rasp.SequenceMap(f, a.sop, b.sop))
        return self.add(sop, "cat", out, [a, b], text, "sequence map")

    def op_shift(self) -> Var | None:
        rasp, rng = self.rasp, self.rng
        s = self.pick(lambda v: self.cat(v) and v.name != "indices")
        if s is None:
            return None
        k = int(rng.integers(1, 3)) * (1 if rng.random() < 0.7 else -1)
        idx = self.vars[1]
        q = rasp.categorical(rasp.Map(lambda i, k=k: i - k, idx.sop))
        sel = rasp.Select(idx.sop, q, rasp.Comparison.EQ)
        sop = rasp.categorical(rasp.Aggregate(sel, s.sop))
        where = f"i - {k}" if k > 0 else f"i + {-k}"
        text = f"{s.name} at position {where} (none where that position does not exist)"
        return self.add(sop, "cat", list(s.values or []), [s, idx], text, "shift")

    def op_reverse(self) -> Var | None:
        rasp = self.rasp
        s = self.pick(lambda v: self.cat(v) and v.name != "indices")
        if s is None:
            return None
        tok, idx = self.vars[0], self.vars[1]
        length = rasp.SelectorWidth(rasp.Select(tok.sop, tok.sop, rasp.Comparison.TRUE))
        opp = rasp.categorical(rasp.SequenceMap(lambda i, n: n - 1 - i, idx.sop, length))
        sop = rasp.categorical(rasp.Aggregate(rasp.Select(idx.sop, opp, rasp.Comparison.EQ), s.sop))
        text = f"{s.name} reversed (position i reads position length - 1 - i)"
        return self.add(sop, "cat", list(s.values or []), [s, tok, idx], text, "reverse")

    def _select(self) -> tuple[Any, str, list[Var]] | None:
        rasp, rng = self.rasp, self.rng
        keys = self.pick(self.cat)
        if keys is None:
            return None
        queries = self.pick(lambda v: self.cat(v) and _comparable(keys, v))
        if queries is None:
            return None
        names = ["EQ", "NEQ", "LT", "LEQ", "GT", "GEQ", "TRUE"]
        cmp = names[int(rng.integers(len(names)))]
        sel = rasp.Select(keys.sop, queries.sop, getattr(rasp.Comparison, cmp))
        if cmp == "TRUE":
            what = "all positions k"
        else:
            what = f"positions k with {keys.name}[k] {_CMP_TEXT[cmp]} {queries.name}[q]"
        return sel, what, [keys, queries]

    def op_mean(self) -> Var | None:
        rasp = self.rasp
        ind = self.pick(lambda v: v.kind == "num" and v.values == [0, 1])
        got = self._select()
        if ind is None or got is None:
            return None
        sel, what, deps = got
        sop = rasp.numerical(rasp.Aggregate(sel, ind.sop, default=0))
        text = f"at position q, the mean of {ind.name} over {what} (0 if none; numerical)"
        return self.add(sop, "num", None, [ind, *deps], text, "mean")

    def op_width(self) -> Var | None:
        got = self._select()
        if got is None:
            return None
        sel, what, deps = got
        sop = self.rasp.SelectorWidth(sel)
        text = f"at position q, the number of {what}"
        return self.add(sop, "cat", list(range(self.max_len + 1)), deps, text, "width")

    def op_threshold(self) -> Var | None:
        rasp, rng = self.rasp, self.rng
        s = self.pick(lambda v: v.kind == "num")
        if s is None:
            return None
        t = float(rng.choice([0.0, 0.25, 0.5]))
        sop = rasp.categorical(rasp.Map(lambda x, t=t: 1 if x > t else 0, s.sop))
        return self.add(sop, "cat", [0, 1], [s], f"1 if {s.name} > {t} else 0", "threshold")


_OPS = (
    ("op_map", 3.0),
    ("op_indicator", 2.0),
    ("op_sequence_map", 2.0),
    ("op_shift", 1.5),
    ("op_reverse", 0.7),
    ("op_mean", 2.5),
    ("op_width", 2.0),
    ("op_threshold", 1.0),
)


def draw_program(
    rng: np.random.Generator, vocab: list[Any], max_len: int, n_ops: tuple[int, int]
) -> Program:
    """One program (not yet checked) with n_ops[0]..n_ops[1] operations."""
    d = _Drawer(rng, vocab, max_len)
    want = int(rng.integers(n_ops[0], n_ops[1] + 1))
    names, weights = zip(*_OPS, strict=True)
    p = np.array(weights) / sum(weights)
    for _ in range(want * 10):
        if len(d.ops) >= want:
            break
        getattr(d, names[int(rng.choice(len(names), p=p))])()
    if not d.ops:
        raise GenerationFailed("no operation fitted")
    last = d.vars[-1]
    used = d.used(last)
    lines = [*(f"{v.name} = {v.line}" for v in used), f"output = {last.name}"]
    return Program(
        last.sop, "\n".join(lines), list(vocab), max_len, [v.op for v in used], last.depth
    )


def check(program: Program, compiled: Compiled, rng: np.random.Generator) -> str | None:
    """Why the compiled program is not kept, or None."""
    from interp_harness.function_store.circuits.programs import evaluate

    model = CircuitModel(compiled.arrays, compiled.meta)
    n = program.max_len
    xs = [
        [program.vocab[int(i)] for i in rng.integers(len(program.vocab), size=length)]
        for length in [n] * (CHECK_INPUTS // 2) + list(rng.integers(1, n + 1, CHECK_INPUTS // 2))
    ]
    got = model.run(xs)
    want = [evaluate(program.sop, x) for x in xs]
    defined = total = 0
    for g, w in zip(got, want, strict=True):
        for a, b in zip(g, w, strict=True):
            total += 1
            if b is None:
                continue
            defined += 1
            if compiled.meta.output_kind == "numerical":
                if a is None or abs(float(a) - float(b)) > 1e-3:
                    return "the compiled model disagrees with RASP"
            elif a != b:
                return "the compiled model disagrees with RASP"
    if defined < total / 2:
        return "most positions have no output"
    full = [tuple(w) for w, x in zip(want, xs, strict=True) if len(x) == n]
    if len(set(full)) < 2:
        return "the output does not depend on the tokens"
    return None


def generate(
    rng: np.random.Generator,
    vocab: list[Any] | None = None,
    max_len: int | None = None,
    n_ops: tuple[int, int] = (2, 5),
) -> tuple[Program, Compiled, int]:
    """A checked program and its compile, with the number of draws it took. The vocabulary and
    length are drawn unless given (a distractor takes its target's)."""
    for tries in range(1, MAX_TRIES + 1):
        v, n = (vocab, max_len) if vocab is not None and max_len is not None else draw_task(rng)
        try:
            program = draw_program(rng, v, n, n_ops)
            compiled = compile_program(program.sop, v, n)
        except Exception:  # noqa: BLE001 - tracr raises many kinds for a program it cannot compile
            continue
        try:
            why = check(program, compiled, rng)
        except Exception:  # noqa: BLE001 - RASP's evaluation fails on some drawn inputs
            continue
        if why is None:
            return program, compiled, tries
    raise GenerationFailed(f"no compilable, non-constant program in {MAX_TRIES} draws")
