"""The orchestrator: API, scheduler, episode loop, PYTHON(...) protocol, SQL store and CLI."""
