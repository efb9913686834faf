"""The web UI: server-rendered pages for runs, transcripts, plots and comparisons (docs/web.md)."""

from interp_harness.harness.web.routes import router

__all__ = ["router"]
