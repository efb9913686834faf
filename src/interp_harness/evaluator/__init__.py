"""Scorers, judge clients and sandboxed execution of agent-written code."""
