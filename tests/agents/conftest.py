"""Fixtures for the agents tests: the loopback stand-ins for the paid APIs (tests/support)."""

from support.provider_stand_in import provider_server, server  # noqa: F401 - fixtures
