"""What pre-flight says when the LM backbone is missing (interp_harness.harness.runs.preflight probes the server for
every target whose benchmark record declares the `backbone` service)."""

MISSING = (
    "entity and relation targets need the LM backbone: set HARNESS_BACKBONE_URL to an "
    "OpenAI-compatible server (e.g. `harness backbone serve`, then "
    "HARNESS_BACKBONE_URL=http://127.0.0.1:8000/v1)"
)
