"""A run's configuration in one line: what tells two runs of one agent apart (protocol mode and
method, agent options, budgets, epochs). Reports head each run's rows with it, and the runs list,
the run page and `harness compare` show it."""

from __future__ import annotations

import json
from typing import Any

from interp_harness.harness.domain.spec import Budgets, RunSpec

_DEFAULT_BUDGETS = Budgets().model_dump()


def config_label(spec: RunSpec | dict[str, Any]) -> str:
    """`mode code-tools, options {"max_inputs_per_call": 50}, max_target_calls 5`: the protocol
    mode always, the rest only where it is not the default."""
    s = spec if isinstance(spec, RunSpec) else RunSpec.model_validate(spec)
    parts = [f"mode {s.protocol.mode}"]
    if s.protocol.method != "interactive":
        parts.append(f"method {s.protocol.method}")
    if s.agent_options:
        parts.append(
            "options " + json.dumps(s.agent_options, sort_keys=True, separators=(", ", ": "))
        )
    parts += [
        f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}"
        for k, v in s.budgets.model_dump().items()
        if v != _DEFAULT_BUDGETS.get(k)
    ]
    if s.epochs > 1:
        parts.append(f"{s.epochs} epochs ({s.epoch_reducer})")
    return ", ".join(parts)
