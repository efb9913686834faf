"""Ground-truth descriptions in words, generated from a function spec.

They describe what the target serves: for find-v1 that includes the release's quirks (absolute
without its bias, square waves reduced to a sign step where the release loses the sine).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from interp_harness.function_store.numeric.families import COMPOSE_OPS


def _poly(coeffs: list[Any], ascending: bool) -> str:
    deg = len(coeffs) - 1
    parts = []
    for i, c in enumerate(coeffs):
        k = i if ascending else deg - i
        parts.append(f"{c}" if k == 0 else (f"{c}*x" if k == 1 else f"{c}*x^{k}"))
    return " + ".join(parts)


# families whose description is a formula of their parameters alone
_FORMULAS: dict[str, Callable[[Any], str]] = {
    "linear": lambda p: f"a linear function {p[0]}*x + {p[1]}",
    "polynomial": lambda p: f"a degree-{len(p) - 1} polynomial {_poly(p, ascending=False)}",
    "rational": lambda p: f"a rational function ({_poly(p[0], True)}) / ({_poly(p[1], True)})",
    "reciprocal": lambda p: f"a reciprocal 1/({p[0]}*x)",
    "logarithm": lambda p: f"a logarithm {p[0]}*log_{p[2]}(x) + {p[1]}",
    "step": lambda p: (
        f"a step function: {p[1]} for x < 0, {p[0]} + {p[1]} for x > 0 "
        f"(at x = 0: {p[0]}*{p[2]} + {p[1]})"
    ),
    "rectangle": lambda p: f"a rectangle: 1 where |x| <= {p[0]}/2, else 0",
    "relu": lambda p: f"a leaky ReLU {p[0]}*(x if x > 0 else {p[2]}*x) + {p[1]}",
    "gaussian": lambda p: f"a Gaussian density with mean {p[0]} and standard deviation {p[1]}",
    "constant": lambda p: f"the constant {p}",
    "ceil": lambda p: "the ceiling of x",
    "floor": lambda p: "the floor of x",
}


def describe_atomic(name: str, p: Any, *, collapsed_square: bool, release: bool) -> str:
    if name in _FORMULAS:
        return _FORMULAS[name](p)
    if name == "absolute":
        if release:
            return f"a scaled absolute value {p[0]}*|x| (the released code drops the bias {p[1]})"
        return f"a scaled absolute value {p[0]}*|x| + {p[1]}"
    if name == "root":
        kind = "square root" if p[2] == 2 else f"root of order {p[2]}"
        return f"a {kind}: {p[0]}*x^(1/{p[2]}) + {p[1]}"
    if name in ("tanh", "sin", "cos"):
        return f"{p[0]}*{name}(2*pi/{p[1]} * (x - {p[2]})) + {p[3]}" + (
            f", a periodic function with period {p[1]}" if name != "tanh" else ", an S-shaped curve"
        )
    if name == "square_wave":
        if collapsed_square:
            return (
                "a sign step: 1 for x > 0, -1 otherwise (a square wave with period "
                f"{p[0]} and shift {p[1]} whose sine the released code loses)"
            )
        return f"a square wave of period {p[0]} and shift {p[1]}: 1 where sin(2*pi*(x - {p[1]})/{p[0]}) > 0, else -1"
    return name


def describe_function(fn: dict[str, Any], *, release: bool, reused: bool = False) -> str:
    """`reused`: the clean return expression is reused (noised/corrupted code) in the release."""
    name = fn["name"]
    if name in COMPOSE_OPS:
        a, b = (
            describe_atomic(op["name"], op.get("params"), collapsed_square=release, release=release)
            for op in fn["operands"]
        )
        word = "sum" if name == "sum_two" else "product"
        return f"the {word} of {a} and {b}"
    return describe_atomic(
        name, fn.get("params"), collapsed_square=release and reused, release=release
    )


def describe_target(
    fn: dict[str, Any],
    *,
    variant: str,
    noise: str | None,
    corruption: dict[str, Any] | None,
    release: bool,
) -> str:
    text = describe_function(
        fn, release=release and variant != "mlp", reused=variant in ("noised", "corrupted")
    )
    if variant == "mlp":
        return f"An MLP (1-64-ReLU-1) trained to approximate {text}."
    out = f"f(x) is {text}."
    if noise == "normal":
        out += " Each call adds Gaussian noise N(0, 1)."
    elif noise == "uniform":
        out += " Each call adds uniform noise in [-1, 1]."
    elif noise == "poisson":
        out += (
            " Each call adds Poisson(1) noise (mean +1)."
            if release
            else " Each call adds centred Poisson noise Poisson(1) - 1."
        )
    if corruption:
        b = corruption["boundary"]
        where = {
            "interval_inside": f"on the interval ({b[0]}, {b[-1]})",
            "interval_smaller": f"for x <= {b[0]}",
            "interval_larger": f"for x >= {b[0]}",
        }[corruption["type"]]
        out += f" {where[0].upper() + where[1:]} the output is replaced by noise N({corruption['mean']}, 0.1)."
    return out
