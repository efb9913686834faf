"""Migration scripts, applied in order by `harness db upgrade` or at start."""
