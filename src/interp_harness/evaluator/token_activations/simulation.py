"""A token-activation target's simulation scores as its scorer records them (Bills et al. 2023;
interp_harness.evaluator.simulation): the agent's description and, beside it, the reference
explanation's ceiling on the target's held-out texts, with the simulator the scoring context
configures; texts drawn and ceilings cached by the target's id. Unusable simulator settings and
simulator failures are `judge` error states, never a score; a description the simulator cannot
be given is the agent's score (interp_harness.evaluator.answer_bounds). Shared by the neuron and
SAE scorers.
"""

from __future__ import annotations

from collections.abc import Sequence

from interp_harness.evaluator.answer_bounds import description_refusal
from interp_harness.evaluator.simulation import scoring as simulation
from interp_harness.sdk import ScoreResult, ScoringContext


async def score_simulation(
    target_id: str,
    description: str,
    reference: str | None,
    excerpts: Sequence[simulation.Excerpt],
    ctx: ScoringContext,
) -> list[ScoreResult]:
    """`simulation_top_random` and `simulation_all`, and their `_ceiling`s when there is a
    reference explanation. A description the simulator cannot be given (none, or past its
    bound) is checked here, before any request: the agent's scores are then the worst value."""
    refusal = description_refusal(description, "simulation")
    try:
        sim = ctx.simulator()
    except Exception as e:  # unusable simulator settings: the simulator's metrics are errors
        return simulation.error_results("judge", f"{type(e).__name__}: {e}")
    try:
        return await simulation.score_explanations(
            description,
            reference or None,
            excerpts,
            sim,
            seed=target_id,
            cache_key=(target_id,),
            refusal=refusal,
        )
    finally:
        await sim.aclose()
