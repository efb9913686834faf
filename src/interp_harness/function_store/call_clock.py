"""A target call's time limit: how long a call may run, which time counts, and what to say when it
runs out.

Every call may run `HARNESS_SERVICE_CALL_TIMEOUT_S` (the operator's base, 10 s: a call of a family
whose record declares no budget, e.g. a function of numbers, gets exactly that). A family whose
targets read a model declares a `CallBudget` in its record, seconds per input and per thousand
characters of input, added for the call's size: a call of 64 texts through a language model is
not a call of 10 numbers. Time the call's requests waited in a
model service's queue (the service reports it with each reply, `queue_s`) is not counted: it is
other callers' work, not the target's slowness. Whatever is counted, no call runs past the ceiling
`HARNESS_SERVICE_CALL_CEILING_S` (against a stuck service), queue included.

A model request's queue wait is known only when it answers, so while one is in flight the target
service does not fail the call (except at the ceiling); the runner's `model_request` checks the
limit when the request answers, in the runner's thread. Between requests the service checks it as
time passes (`interp_harness.function_store.service.app`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

BASE_SETTING = "HARNESS_SERVICE_CALL_TIMEOUT_S"
CEILING_SETTING = "HARNESS_SERVICE_CALL_CEILING_S"
# above the intervention client's own 300 s read timeout: a stuck model request fails as that
# service's error first; calls queued behind scoring at load ~13 on 2 cores took up to 270 s
DEFAULT_CEILING_S = 600.0


@dataclass(frozen=True)
class CallBudget:
    """Seconds a call may take beyond the base, per input and per 1000 characters of input."""

    per_input_s: float = 0.0
    per_kchar_s: float = 0.0


@dataclass(frozen=True)
class CallLimit:
    """One call's limit and what it is made of (the message names each part)."""

    base_s: float  # HARNESS_SERVICE_CALL_TIMEOUT_S
    ceiling_s: float  # HARNESS_SERVICE_CALL_CEILING_S, never below the base
    family: str = ""
    budget: CallBudget | None = None
    inputs: int = 0
    chars: int = 0

    @property
    def seconds(self) -> float:
        b = self.budget
        extra = b.per_input_s * self.inputs + b.per_kchar_s * self.chars / 1000 if b else 0.0
        return min(self.ceiling_s, self.base_s + extra)

    def explain(self) -> str:
        """`HARNESS_SERVICE_CALL_TIMEOUT_S=10 s + 16 inputs × 2.5 s + ..., at most ...`."""
        parts = [f"{BASE_SETTING}={self.base_s:g} s"]
        b = self.budget
        if b and b.per_input_s:
            parts.append(f"{self.inputs} inputs × {b.per_input_s:g} s")
        if b and b.per_kchar_s:
            parts.append(f"{self.chars} characters × {b.per_kchar_s:g} s per 1000")
        text = " + ".join(parts)
        if len(parts) > 1:
            text += f" (the {self.family!r} record's budget)"
        return f"{text}, at most {CEILING_SETTING}={self.ceiling_s:g} s"


def call_limit(
    base_s: float,
    ceiling_s: float,
    inputs: list[str],
    family: str = "",
    budget: CallBudget | None = None,
) -> CallLimit:
    return CallLimit(
        base_s=base_s,
        ceiling_s=max(ceiling_s, base_s),  # an operator who raises the base means it
        family=family,
        budget=budget,
        inputs=len(inputs),
        chars=sum(len(x) for x in inputs),
    )


class CallOverTime(Exception):
    """A call ran past its limit; the message names the settings and what to change."""


class CallClock:
    """The time one call has used, for the service's event loop and the runner's thread. The
    ceiling counts from the clock's creation (the call's arrival); the limit from `start()`, when
    the runner begins (waiting for a worker thread of the service is not the target's time)."""

    def __init__(self, limit: CallLimit, *, started: bool = True) -> None:
        self.limit = limit
        self.arrived = time.monotonic()
        self.started: float | None = self.arrived if started else None
        self.queued_s = 0.0  # reported by the model services; not counted
        self._in_flight = 0
        self._lock = threading.Lock()
        self.on_change: Callable[[], None] | None = None  # started, or a request left: check

    def start(self) -> None:
        with self._lock:
            self.started = time.monotonic()
        if self.on_change is not None:
            self.on_change()

    @property
    def in_flight(self) -> bool:
        with self._lock:
            return self._in_flight > 0

    @property
    def deadline(self) -> float:
        with self._lock:
            if self.started is None:
                return self.ceiling_at
            return min(self.started + self.limit.seconds + self.queued_s, self.ceiling_at)

    @property
    def ceiling_at(self) -> float:
        return self.arrived + self.limit.ceiling_s

    def enter(self) -> None:
        with self._lock:
            self._in_flight += 1

    def leave(self, queued_s: float) -> None:
        with self._lock:
            self._in_flight -= 1
            self.queued_s += queued_s
        if self.on_change is not None:
            self.on_change()

    def overrun(self, now: float | None = None) -> str | None:
        """Why the call is over its limit now, or None."""
        now = time.monotonic() if now is None else now
        if now >= self.ceiling_at:
            return self.ceiling_message()
        if now >= self.deadline:
            return self.limit_message(now)
        return None

    def limit_message(self, now: float) -> str:
        """What ran out, what the operator changes, then what the limit is made of (in that
        order: pages lead with the first 500 characters)."""
        counted = now - (self.started or now) - self.queued_s
        queued = (
            f"; {self.queued_s:.1f} s in the model service's queue not counted"
            if self.queued_s
            else ""
        )
        return (
            f"the call took longer than its {self.limit.seconds:.1f} s time limit ({counted:.1f} s "
            f"counted{queued}). On a slow or busy machine the operator raises {BASE_SETTING}; "
            f"the limit is {self.limit.explain()}"
        )

    def ceiling_message(self) -> str:
        return (
            f"the call ran past {CEILING_SETTING}={self.limit.ceiling_s:g} s, the ceiling of "
            "every call, time waiting for the model service included (a stuck or overloaded "
            f"service?); the operator raises {CEILING_SETTING} if calls are that slow"
        )


CURRENT: ContextVar[CallClock | None] = ContextVar("call_clock", default=None)


@contextmanager
def model_request() -> Iterator[Callable[[float | None], None]]:
    """Around one request of a runner to a model service. Yields `report(queue_s)`, to be called
    with the seconds the service says the request waited in its queue. While the request is in
    flight the target service does not fail the call; when it answers, this raises
    `CallOverTime` if the call's counted time is past its limit. Outside a target service (no
    clock): nothing."""
    clock = CURRENT.get()
    if clock is None:
        yield lambda _s: None
        return
    sent = time.monotonic()
    reported = [0.0]

    def report(queue_s: float | None) -> None:
        reported[0] = max(0.0, queue_s or 0.0)

    clock.enter()
    answered = False
    try:
        yield report
        answered = True
    finally:
        # never more than the request was out: a service cannot excuse time it did not take
        clock.leave(min(reported[0], time.monotonic() - sent))
    why = clock.overrun() if answered else None
    if why is not None:
        raise CallOverTime(why)
