"""Interpreter agents: the interface, its registry and the built-in agents."""
