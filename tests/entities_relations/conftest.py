"""The backbone server fixtures (tests/model_services/backbone/backbone_server.py)."""

from backbone_server import backbone_url, local_model  # noqa: F401
