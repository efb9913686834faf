"""`CircuitModel`, the circuits targets' experiments (run, ablate, patch, activations,
output_scores). The implementation lives in `model_services/intervention/circuit_model.py`, so
that the intervention server, which may import nothing above `model_services`, serves the very
same experiments; the runner, the scorer and the builder import it from here."""

from interp_harness.model_services.intervention.circuit_model import (
    ABLATIONS,
    N_REFERENCE,
    UNDEFINED_BELOW,
    AblationKind,
    CircuitInputError,
    CircuitModel,
)

__all__ = [
    "ABLATIONS",
    "N_REFERENCE",
    "UNDEFINED_BELOW",
    "AblationKind",
    "CircuitInputError",
    "CircuitModel",
]
