"""A run's final status from its episodes' counts."""

from __future__ import annotations


def final_status(counts: dict[str, int]) -> tuple[str, str | None]:
    """("failed", why) when every episode ended in error; else ("completed", None)."""
    total = sum(counts.values())
    if total and counts.get("error", 0) == total:
        return "failed", "every episode ended in error"
    return "completed", None
