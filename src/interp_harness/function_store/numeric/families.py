"""FIND's numeric functions as expression trees (formulas of FIND's
`math_functions.py`, templates of its `write_source_code.py`).

A function spec is plain JSON:
  atomic:   {"name": "linear", "params": [m, b]}
  composed: {"name": "sum_two" | "multiply_two", "operands": [<atomic spec>, <atomic spec>]}

`release=True` builds what the released files compute, quirks included:
absolute drops its bias, and square_wave's `x = np.sin(...)` line is lost wherever only the return
expression is reused (composed, noised and corrupted code). `release=False` is the corrected
find-gen semantics: the `math_functions.py` formula in every variant.
"""

from __future__ import annotations

from typing import Any

from interp_harness.function_store.numeric.expr import (
    PI,
    AssignX,
    Bin,
    Call,
    Chain,
    Node,
    Num,
    Par,
    Program,
    X,
    chain,
)

#: the 16 families `sample()` draws atomic functions from (FIND's `math_functions.py`)
ATOMIC_FAMILIES: tuple[str, ...] = (
    "linear",
    "polynomial",
    "absolute",
    "root",
    "logarithm",
    "step",
    "relu",
    "tanh",
    "constant",
    "sin",
    "cos",
    "reciprocal",
    "gaussian",
    "rational",
    "rectangle",
    "square_wave",
)
#: operands of composed functions (FIND's `compose_only`)
COMPOSE_FAMILIES: tuple[str, ...] = (
    "linear",
    "polynomial",
    "step",
    "relu",
    "constant",
    "ceil",
    "floor",
    "rectangle",
    "square_wave",
)
COMPOSE_OPS: tuple[str, ...] = ("multiply_two", "sum_two")


class SpecError(ValueError):
    """A function spec that names an unknown family or carries malformed parameters."""


def _mul(a: Node, b: Node, fmt: str = "{}*{}") -> Bin:
    return Bin("*", a, b, fmt)


def _power_terms(coeffs: list[Any], powers: list[int]) -> Chain:
    """`c0*x**k0 + c1*x**k1 + ...` (the writer's " + ".join of `{c}*x**{k}`)."""
    terms = [
        _mul(Num(c), Bin("**", X(), Num(k), "{}**{}")) for c, k in zip(coeffs, powers, strict=True)
    ]
    return chain(*terms)


def _periodic(func: str, p: list[Any]) -> Chain:
    amp, period, shift, bias = p
    arg = Bin(
        "*",
        Par(Bin("/", _mul(Num(2), PI, "{} * {}"), Num(period), "{} / {}")),
        Par(Bin("-", X(), Num(shift), "{}-{}")),
        "{}*{}",
    )
    return chain(_mul(Num(amp), Call(func, (arg,)), "{} * {}"), Num(bias))


def _square_wave_sine(period: Any, shift: Any) -> Node:
    """`np.sin((x - shift) * (2 * np.pi / period))`."""
    return Call(
        "np.sin",
        (
            Bin(
                "*",
                Par(Bin("-", X(), Num(shift), "{} - {}")),
                Par(Bin("/", _mul(Num(2), PI, "{} * {}"), Num(period), "{} / {}")),
                "{} * {}",
            ),
        ),
    )


def _sign_step(inner: Node) -> Node:
    return Call("np.where", (Bin(">", inner, Num(0), "{} > {}"), Num(1), Num(-1)))


def _params(name: str, params: Any, n: int | None) -> list[Any]:
    if n is None:
        return params
    if not isinstance(params, list | tuple) or len(params) != n:
        raise SpecError(f"{name} expects {n} parameters, got {params!r}")
    return list(params)


def atomic_program(name: str, params: Any, release: bool) -> Program:
    """The clean `function(x)` of one atomic function."""
    if name == "square_wave":
        period, shift = _params(name, params, 2)
        if release:  # two statements; only the second survives reuse of "the return expression"
            return Program(_sign_step(X()), (AssignX(_square_wave_sine(period, shift)),))
        return Program(Chain((_sign_step(_square_wave_sine(period, shift)),)))
    return Program(_atomic_expr(name, params, release))


def _atomic_expr(name: str, params: Any, release: bool) -> Chain:
    if name == "linear":
        m, b = _params(name, params, 2)
        return chain(_mul(Num(m), X()), Num(b))
    if name == "polynomial":
        coeffs = list(params)
        if len(coeffs) < 1:
            raise SpecError("polynomial needs at least one coefficient")
        deg = len(coeffs) - 1
        return _power_terms(coeffs, [deg - i for i in range(deg + 1)])
    if name == "rational":
        num, den = _params(name, params, 2)
        ratio = Bin(
            "/",
            Par(_power_terms(list(num), list(range(len(num))))),
            Par(_power_terms(list(den), list(range(len(den))))),
            "{} / {}",
        )
        return Chain((ratio,))
    if name == "absolute":
        a, b = _params(name, params, 2)
        term = _mul(Num(a), Call("np.abs", (X(),)))
        return Chain((term,)) if release else chain(term, Num(b))  # release: bias dropped
    if name == "root":
        a, b, n = _params(name, params, 3)
        power = Bin("**", X(), Par(Bin("/", Num(1.0), Num(n), "{} / {}")), "{}**{}")
        return chain(_mul(Num(a), Par(power)), Num(b))
    if name == "reciprocal":
        (a,) = _params(name, params, 1)
        return Chain((Bin("/", Num(1), Par(_mul(Num(a), X(), "{} * {}")), "{} / {}"),))
    if name == "logarithm":
        a, b, base = _params(name, params, 3)
        ratio = Bin("/", Call("np.log", (X(),)), Call("np.log", (Num(base),)), "{} / {}")
        return chain(_mul(Num(a), Par(ratio)), Num(b))
    if name == "step":
        a, b, s = _params(name, params, 3)
        return chain(_mul(Num(a), Call("np.heaviside", (X(), Num(s)))), Num(b), sep="+ ")
    if name == "rectangle":
        (w,) = _params(name, params, 1)
        cond = Bin("<=", Call("abs", (X(),)), Bin("/", Num(w), Num(2), "{}/{}"), "{} <= {}")
        return Chain((Call("np.where", (cond, Num(1), Num(0)), sep=","),))
    if name == "relu":
        a, b, leak = _params(name, params, 3)
        where = Call(
            "np.where",
            (Bin(">", X(), Num(0), "{} > {}"), X(), _mul(X(), Num(leak), "{} * {}")),
        )
        return chain(_mul(Num(a), where, "{} * {}"), Num(b))
    if name in ("tanh", "sin", "cos"):
        return _periodic(f"np.{name}", _params(name, params, 4))
    if name == "gaussian":
        mean, std = _params(name, params, 2)
        norm = Par(
            Bin(
                "/",
                Num(1),
                Par(_mul(Num(std), Call("np.sqrt", (_mul(Num(2), PI, "{} * {}"),)), "{} * {}")),
                "{} / {}",
            )
        )
        z = Par(Bin("/", Par(Bin("-", X(), Num(mean), "{} - {}")), Num(std), "{} / {}"))
        expo = Call("np.exp", (_mul(Num(-0.5), Bin("**", z, Num(2), "{} ** {}"), "{} * {}"),))
        return Chain((_mul(norm, expo, "{} * {}"),))
    if name == "constant":
        if not isinstance(params, int | float) or isinstance(params, bool):
            raise SpecError(f"constant expects a bare number, got {params!r}")
        return Chain((_mul(Num(params), Call("np.ones_like", (X(),)), "{}* {}"),))
    if name in ("ceil", "floor"):
        return Chain((Call(f"np.{name}", (X(),)),))
    if name == "square_wave":  # only reached through return_expr in composed code
        period, shift = _params(name, params, 2)
        return Chain((_sign_step(_square_wave_sine(period, shift)),))
    raise SpecError(f"unknown numeric family {name!r}")


def return_expr(fn: dict[str, Any], release: bool) -> Chain:
    """The function's return expression: what the released writer reuses (regex `return (.*)`)."""
    return _as_chain(clean_program(fn, release).ret)


def _as_chain(node: Node) -> Chain:
    return node if isinstance(node, Chain) else Chain((node,))


def clean_program(fn: dict[str, Any], release: bool) -> Program:
    name = fn.get("name")
    if name in COMPOSE_OPS:
        ops = fn.get("operands")
        if not isinstance(ops, list) or len(ops) != 2:
            raise SpecError(f"{name} needs two operands, got {ops!r}")
        e1, e2 = (return_expr(op, release) for op in ops)
        if name == "sum_two":
            joined = e1.plus(e2)
            # the release template is `return {E1} + {E2} `: its trailing space shows up in the
            # noised and corrupted code that reuse this expression
            return Program(Chain(joined.terms, joined.seps, " " if release else ""))
        return Program(Chain((Bin("*", Par(e1), Par(e2), "{} * {}"),)))
    if not isinstance(name, str):
        raise SpecError(f"function spec without a name: {fn!r}")
    return atomic_program(name, fn.get("params"), release)


def family_names(fn: dict[str, Any]) -> list[str]:
    """Atomic family names in a spec, e.g. ["relu", "linear"] for a composed function."""
    if fn["name"] in COMPOSE_OPS:
        return [op["name"] for op in fn["operands"]]
    return [fn["name"]]


def domain_for(fn: dict[str, Any]) -> list[int]:
    """The released data's domains: log [1,100], root [0,100], else [-100,100]."""
    names = family_names(fn)
    if "logarithm" in names:
        return [1, 100]
    if "root" in names:
        return [0, 100]
    return [-100, 100]
