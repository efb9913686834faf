"""The `circuits` family: compiled transformers with a known circuit (issue 52)."""
