"""A tiny expression tree that both renders FIND-style source text and evaluates it.

One tree gives the ground-truth `code` text and the values the target serves, so the two cannot
drift apart. Nothing here evaluates a string: each node applies the Python/numpy operation its text
names, on whatever `x` is (a Python float, a 0-d array or a full array). Using the very operations
the released files use, in the same order, is what makes outputs match them (Python float
semantics raise ZeroDivisionError and give complex roots; numpy semantics give inf / nan).

Rendering is explicit: every node carries the exact text layout of the released templates
(spacing included); nodes never infer parentheses, the builders place `Par` where the text has one.
"""

from __future__ import annotations

import operator
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Env:
    """Evaluation state: the current `x` and the random source used by noise nodes."""

    x: Any
    rng: np.random.RandomState


class Node(ABC):
    @abstractmethod
    def render(self) -> str: ...

    @abstractmethod
    def eval(self, env: Env) -> Any: ...


@dataclass(frozen=True)
class X(Node):
    def render(self) -> str:
        return "x"

    def eval(self, env: Env) -> Any:
        return env.x


@dataclass(frozen=True)
class Num(Node):
    """A literal; rendered with Python `str()` as the released writer inserted stored params."""

    value: Any
    text: str | None = None

    def render(self) -> str:
        return self.text if self.text is not None else str(self.value)

    def eval(self, env: Env) -> Any:
        return self.value


PI = Num(np.pi, "np.pi")

_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "**": operator.pow,
    "&": operator.and_,
    ">": operator.gt,
    "<": operator.lt,
    "<=": operator.le,
}


@dataclass(frozen=True)
class Bin(Node):
    """`left <op> right`; `fmt` is the text layout, e.g. "{}*{}" or "{} / {}"."""

    op: str
    left: Node
    right: Node
    fmt: str = "{} {} {}"

    def render(self) -> str:
        if self.fmt.count("{}") == 3:
            return self.fmt.format(self.left.render(), self.op, self.right.render())
        return self.fmt.format(self.left.render(), self.right.render())

    def eval(self, env: Env) -> Any:
        left = self.left.eval(env)  # Python evaluates the left operand first
        return _OPS[self.op](left, self.right.eval(env))


@dataclass(frozen=True)
class Par(Node):
    inner: Node

    def render(self) -> str:
        return f"({self.inner.render()})"

    def eval(self, env: Env) -> Any:
        return self.inner.eval(env)


def _asarray_float(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=float)


_FUNCS: dict[str, Callable[..., Any]] = {
    "np.where": np.where,
    "np.heaviside": np.heaviside,
    "np.log": np.log,
    "np.abs": np.abs,
    "abs": abs,
    "np.tanh": np.tanh,
    "np.sin": np.sin,
    "np.cos": np.cos,
    "np.exp": np.exp,
    "np.sqrt": np.sqrt,
    "np.ones_like": np.ones_like,
    "np.ceil": np.ceil,
    "np.floor": np.floor,
    "np.array": np.array,
}


@dataclass(frozen=True)
class Call(Node):
    """A call of one whitelisted function; all arguments are evaluated (both np.where branches)."""

    func: str
    args: tuple[Node, ...]
    sep: str = ", "

    def render(self) -> str:
        return f"{self.func}({self.sep.join(a.render() for a in self.args)})"

    def eval(self, env: Env) -> Any:
        return _FUNCS[self.func](*(a.eval(env) for a in self.args))


@dataclass(frozen=True)
class Chain(Node):
    """A flat left-to-right sum `t0 + t1 + ...` as Python parses concatenated return expressions.

    `seps[i]` is the text between terms i and i+1; `tail` is text after the last term (the
    composed sum_two writer leaves a trailing space that later templates keep).
    """

    terms: tuple[Node, ...]
    seps: tuple[str, ...] = ()
    tail: str = ""

    def __post_init__(self) -> None:
        if len(self.seps) != len(self.terms) - 1:
            raise ValueError("a chain needs one separator between each pair of terms")

    def render(self) -> str:
        out = self.terms[0].render()
        for sep, term in zip(self.seps, self.terms[1:], strict=True):
            out += sep + term.render()
        return out + self.tail

    def eval(self, env: Env) -> Any:
        value = self.terms[0].eval(env)
        for term in self.terms[1:]:
            value = value + term.eval(env)
        return value

    def plus(self, other: Node, sep: str = " + ") -> Chain:
        """Textual `self + other`: the old tail stays in front of the new separator."""
        more = other if isinstance(other, Chain) else Chain((other,))
        return Chain(
            self.terms + more.terms,
            self.seps + (self.tail + sep,) + more.seps,
            more.tail,
        )


def chain(*terms: Node, sep: str = " + ") -> Chain:
    return Chain(tuple(terms), tuple(sep for _ in terms[1:]))


@dataclass(frozen=True)
class Noise(Node):
    """One random draw per evaluation. `kind` picks the distribution, `text` is its source."""

    kind: str  # normal | uniform | poisson | poisson_centered | corruption
    text: str
    loc: float = 0.0  # corruption only: mean of N(loc, 0.1)

    def render(self) -> str:
        return self.text

    def eval(self, env: Env) -> Any:
        rng = env.rng
        if self.kind == "normal":
            return rng.normal(scale=1)
        if self.kind == "uniform":
            return rng.uniform(low=-1, high=1)
        if self.kind == "poisson":
            return rng.poisson(lam=1)
        if self.kind == "poisson_centered":
            return rng.poisson(lam=1) - 1
        if self.kind == "corruption":
            return rng.normal(loc=self.loc, scale=0.1, size=np.shape(env.x))
        raise ValueError(f"unknown noise kind {self.kind!r}")


# ---- statements -------------------------------------------------------------------------------


class Stmt(ABC):
    @abstractmethod
    def render(self) -> list[str]: ...

    @abstractmethod
    def run(self, env: Env) -> None: ...


@dataclass(frozen=True)
class AssignX(Stmt):
    value: Node

    def render(self) -> list[str]:
        return [f"x = {self.value.render()}"]

    def run(self, env: Env) -> None:
        env.x = self.value.eval(env)


@dataclass(frozen=True)
class ScalarToArray(Stmt):
    """The corrupted template's guard: a Python int/float becomes a 0-d array."""

    def render(self) -> list[str]:
        return ["if type(x) == int or type(x) == float:", "    x = np.array(x)"]

    def run(self, env: Env) -> None:
        if type(env.x) is int or type(env.x) is float:
            env.x = np.array(env.x)


@dataclass(frozen=True)
class AsFloatArray(Stmt):
    """find-gen: evaluate with numpy float semantics whatever the caller passes."""

    def render(self) -> list[str]:
        return ["x = np.asarray(x, dtype=float)"]

    def run(self, env: Env) -> None:
        env.x = _asarray_float(env.x)


@dataclass(frozen=True)
class Program:
    """`def function(x):` body: statements, then `return <ret>`."""

    ret: Node
    stmts: tuple[Stmt, ...] = field(default_factory=tuple)
    indent: int = 4  # the noised template indents its return by 8 (cosmetic, kept)

    def evaluate(self, x: Any, rng: np.random.RandomState) -> Any:
        env = Env(x, rng)
        with np.errstate(all="ignore"):  # the released code prints warnings to stderr only
            for stmt in self.stmts:
                stmt.run(env)
            return self.ret.eval(env)

    def body_lines(self) -> list[str]:
        pad = " " * self.indent
        lines = [pad + line for s in self.stmts for line in s.render()]
        return lines + [f"{pad}return {self.ret.render()}"]


def plus_all(parts: Sequence[Chain]) -> Chain:
    out = parts[0]
    for p in parts[1:]:
        out = out.plus(p)
    return out
