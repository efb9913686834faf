"""The model servers a test session shares, one of each (model, options) per session: a pytest
plugin loaded by the root conftest (`pytest_plugins`), so every test folder sees the same fixture
and it starts once. Test files request these fixtures by name and never import them.

A test that must own a server (it kills it, fills its queue, restarts it, or starts it with other
options or another cache) starts its own with `serve_backbone` / `serve_intervention` and says why.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from backbone_server import serve_backbone
from intervention_server import serve_intervention


@pytest.fixture(scope="session")
def backbone_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The backbone LM server (SmolLM2-135M-Instruct, default options)."""
    yield from serve_backbone(tmp_path_factory.mktemp("backbone") / "server.log")


@pytest.fixture(scope="session")
def local_model(backbone_url: str):  # type: ignore[no-untyped-def]
    """The backbone's weights loaded in the test process (from the cache the server just filled)."""
    from model_services.backbone import model as model_mod

    return model_mod.load()


@pytest.fixture(scope="session")
def smol_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The intervention service on SmolLM2-135M (default options)."""
    yield from serve_intervention("smollm2", tmp_path_factory)
