"""The operator's relation-reply limit reaches the relation modules: from the environment into the
backbone settings, and through the service pool into sandboxed target services."""

from __future__ import annotations

from interp_harness.function_store.entities_relations.client import BackboneSettings
from interp_harness.harness.sandbox.base import get_sandbox
from interp_harness.harness.sandbox.pool import ServicePool


def test_relation_max_tokens_from_the_environment(monkeypatch):
    monkeypatch.setenv("HARNESS_BACKBONE_URL", "http://127.0.0.1:9/v1")
    assert BackboneSettings.from_env().relation_max_tokens == 48  # the default
    monkeypatch.setenv("HARNESS_BACKBONE_RELATION_MAX_TOKENS", "16")
    assert BackboneSettings.from_env().relation_max_tokens == 16


def test_the_pool_passes_it_into_target_services(monkeypatch):
    monkeypatch.setenv("HARNESS_BACKBONE_RELATION_MAX_TOKENS", "12")
    monkeypatch.setenv("HARNESS_NOT_PASSED", "x")
    pool = ServicePool(get_sandbox("inprocess"))
    assert pool.env["HARNESS_BACKBONE_RELATION_MAX_TOKENS"] == "12"
    assert "HARNESS_NOT_PASSED" not in pool.env
